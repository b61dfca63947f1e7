// Background processes: a local_shell call with `background: true` starts its plan here and returns
// an id at once; process_output, process_input, process_kill and process_list reach it by id, only
// from the session that started it. The plan runs through runShellPlan (and so runBounded and the
// sandbox) exactly as a foreground call does, with no deadline but its own, an open stdin, and output
// kept in bounded rolling buffers: a head and a tail per stream, so a process printing a gigabyte
// costs a fixed amount of memory. At most MAX_PER_SESSION run per session; a session's end, the
// host's close and latch's exit end them all (SIGTERM, then SIGKILL: runBounded's own stop).
import { PassThrough } from "node:stream";
import { Refusal, ToolError } from "../errors.js";
import { HeadTailCapture } from "../process/capture.js";
import { runShellPlan, type OutputSink, type RunOptions, type ShellRun } from "./interpret.js";
import type { ShellPlan } from "./plan.js";
import type { Undone } from "../sandbox/guard.js";

export const MAX_PER_SESSION = 8;
const HEAD_BYTES = 16 * 1024;
const TAIL_BYTES = 256 * 1024;
/** How long a background process may run when the call gives no timeout_ms: a day. */
export const BACKGROUND_DEFAULT_MS = 24 * 60 * 60 * 1000;

/**
 * A stream's first HEAD_BYTES and last TAIL_BYTES (HeadTailCapture's buffers), readable while it runs
 * by byte offset since the start. A background process is never stopped for its output.
 */
export class RollingOutput extends HeadTailCapture implements OutputSink {
  constructor(label: string) {
    super(HEAD_BYTES + TAIL_BYTES, label, HEAD_BYTES);
  }

  /** What was written from byte `since` on, at most `max` bytes (the newest when more), and what was lost between. */
  read(since: number, max: number): { text: string; from: number; to: number; dropped: number } {
    const to = this.total;
    since = Math.max(0, Math.min(since, to));
    const tailStart = to - this.tailBytes;
    const parts: Buffer[] = [];
    let dropped = 0;
    if (since < this.headBytes) parts.push(Buffer.concat(this.head).subarray(since));
    const from = Math.max(since, this.headBytes);
    if (from < tailStart) dropped = tailStart - from;
    parts.push(Buffer.concat(this.tail).subarray(Math.max(0, from - tailStart)));
    let out = Buffer.concat(parts);
    if (out.length > max) {
      dropped += out.length - max;
      out = out.subarray(out.length - max);
    }
    return { text: out.toString("utf8"), from: since, to, dropped };
  }
}

interface Background {
  id: string;
  session: string;
  command: string;
  started: number;
  stdout: RollingOutput;
  stderr: RollingOutput;
  stdin: PassThrough;
  stop: AbortController;
  done: Promise<ShellRun>;
  outcome?: ShellRun;
  /** The guard's check of a workspace-write process: undo what it made that runs later. */
  check?: () => void;
  /** What the guard undid since the last process_output / process_list call reported it. */
  undone: Undone[];
}

export class BackgroundProcesses {
  private readonly runs = new Map<string, Background>();
  private next = 0;
  private closed = false;

  start(
    session: string,
    command: string,
    plan: ShellPlan,
    opts: Omit<RunOptions, "signal" | "stdin" | "output">,
  ): string {
    if (this.closed) throw new ToolError("ECLOSED", "latch is shutting down; no new background process starts.");
    const mine = this.list(session).filter((b) => b.running);
    if (mine.length >= MAX_PER_SESSION)
      throw new Refusal(
        `This session already runs ${mine.length} background processes (the limit is ${MAX_PER_SESSION}).`,
        "Stop one with process_kill (process_list shows them), then retry.",
      );
    const id = `bg${++this.next}`;
    const stdin = new PassThrough();
    const stop = new AbortController();
    const b: Background = {
      id,
      session,
      command,
      started: Date.now(),
      stdout: new RollingOutput("stdout"),
      stderr: new RollingOutput("stderr"),
      stdin,
      stop,
      done: Promise.resolve(undefined as never),
      undone: [],
    };
    const guard = opts.sandbox?.guard;
    b.done = runShellPlan(plan, {
      ...opts,
      signal: stop.signal,
      stdin,
      output: { stdout: b.stdout, stderr: b.stderr },
    }).then((r) => {
      // Checked as it ends, so an undo does not wait for the next read (sandbox/guard.ts).
      if (guard) b.undone.push(...guard.check());
      b.outcome = r;
      stdin.destroy();
      return r;
    });
    b.check = guard ? () => b.undone.push(...guard.check()) : undefined;
    this.runs.set(id, b);
    return id;
  }

  private get(session: string, id: string): Background {
    const b = this.runs.get(id);
    if (!b || b.session !== session)
      throw new ToolError("ENOENT", `No background process \`${id}\` in this session. process_list shows yours.`);
    return b;
  }

  output(session: string, id: string, since: { stdout: number; stderr: number }, max: number) {
    const b = this.get(session, id);
    const half = Math.max(1024, Math.floor(max / 2));
    return {
      id,
      running: b.outcome === undefined,
      ...(b.outcome
        ? { exit_code: b.outcome.exit_code, timed_out: b.outcome.timed_out, killed: b.outcome.cancelled }
        : {}),
      stdout: b.stdout.read(since.stdout, half),
      stderr: b.stderr.read(since.stderr, half),
    };
  }

  input(session: string, id: string, text: string): number {
    const b = this.get(session, id);
    if (b.outcome !== undefined || b.stdin.destroyed)
      throw new ToolError("EPIPE", `\`${id}\` has ended; its input is closed.`);
    b.stdin.write(text);
    return Buffer.byteLength(text);
  }

  /** Stop one process and wait until its whole run is gone. */
  async kill(session: string, id: string): Promise<ShellRun> {
    const b = this.get(session, id);
    b.stop.abort();
    b.stdin.destroy();
    return b.done;
  }

  /**
   * Check this session's running workspace-write processes (one, with `id`) and hand over what was
   * undone since the last time, each entry naming its process; process_output and process_list report it.
   */
  takeUndone(session: string, id?: string): Undone[] {
    const out: Undone[] = [];
    for (const b of id === undefined
      ? this.list(session).map((x) => this.get(session, x.id))
      : [this.get(session, id)]) {
      if (b.outcome === undefined) b.check?.();
      out.push(...b.undone.map((u) => ({ ...u, what: `${u.what} (background ${b.id})` })));
      b.undone = [];
    }
    return out;
  }

  list(session: string) {
    return [...this.runs.values()]
      .filter((b) => b.session === session)
      .map((b) => ({
        id: b.id,
        command: b.command,
        running: b.outcome === undefined,
        started: new Date(b.started).toISOString(),
        ...(b.outcome ? { exit_code: b.outcome.exit_code } : {}),
        output_bytes: { stdout: b.stdout.total, stderr: b.stderr.total },
      }));
  }

  /** A session ended: stop its processes, wait for them, forget them. Returns how many were running. */
  async endSession(session: string): Promise<number> {
    const mine = [...this.runs.values()].filter((b) => b.session === session);
    const running = mine.filter((b) => b.outcome === undefined).length;
    for (const b of mine) {
      b.stop.abort();
      b.stdin.destroy();
    }
    await Promise.all(mine.map((b) => b.done));
    for (const b of mine) this.runs.delete(b.id);
    return running;
  }

  /** latch is closing: no new process starts, and every running one is stopped and waited for. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const sessions = new Set([...this.runs.values()].map((b) => b.session));
    await Promise.all([...sessions].map((s) => this.endSession(s)));
  }
}
