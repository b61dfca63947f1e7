// Background processes: a local_shell call with `background: true` starts its plan here and returns
// an id at once; process_output, process_input, process_kill and process_list reach it by id, only
// from the session that started it. The plan runs through runShellPlan (and so runBounded and the
// sandbox) exactly as a foreground call does, with no deadline but its own, an open stdin, and output
// kept in bounded rolling buffers: a head and a tail per stream, so a process printing a gigabyte
// costs a fixed amount of memory. At most MAX_PER_SESSION run per session; a session's end, the
// host's close and latch's exit end them all (SIGTERM, then SIGKILL: runBounded's own stop).
// What latch holds for a session is bounded too: input waits in a feed capped per process (a process
// that does not read makes process_input wait, then refuse), finished runs are kept for a while and
// only the newest few, and the whole (output buffers, queued input) is held to a per-session budget.
import { Refusal, ToolError } from "../errors.js";
import { HeadTailCapture } from "../process/capture.js";
import { InputFeed } from "../process/input-feed.js";
import { runShellPlan, type OutputSink, type RunOptions, type ShellRun } from "./interpret.js";
import type { ShellPlan } from "./plan.js";
import type { Undone } from "../sandbox/guard.js";
import { watchGuard } from "../sandbox/guard-watch.js";
import { lostReport, type MountHolds } from "../sandbox/holds.js";
import { KillAtOnce } from "../process/termination.js";

const MAX_PER_SESSION = 8;
const HEAD_BYTES = 16 * 1024;
const TAIL_BYTES = 256 * 1024;
/** How long a background process may run when the call gives no timeout_ms: a day. */
export const BACKGROUND_DEFAULT_MS = 24 * 60 * 60 * 1000;

export interface BackgroundLimits {
  /** Input queued for one process and not taken yet; past it process_input waits, then refuses. */
  inputCap: number;
  /** Finished runs kept per session (their exit code and last output), the oldest evicted first. */
  maxFinished: number;
  /** How long a finished run is kept. */
  finishedTtlMs: number;
  /** What latch may hold for one session: output buffers and queued input together. */
  sessionBudget: number;
}

const BACKGROUND_LIMITS: BackgroundLimits = {
  inputCap: 1024 * 1024,
  maxFinished: 16,
  finishedTtlMs: 10 * 60_000,
  sessionBudget: 16 * 1024 * 1024,
};

/** Times one path is undone while a background process runs, with no process started between, before it is stopped. */
const REMADE_LIMIT = 3;
/**
 * And whatever foreground calls started between (review g36: a model running `true` beside a loop
 * re-arming a repository reset its count each time): this many undos of one path within REMADE_WINDOW_MS.
 */
const REMADE_WINDOW_LIMIT = 6;
const REMADE_WINDOW_MS = 60_000;
/** And undos of any paths, within REMADE_WINDOW_MS (review g37: eight hook names and keys armed in turn). */
const UNDONE_WINDOW_LIMIT = 10;

/**
 * A stream's first HEAD_BYTES and last TAIL_BYTES (HeadTailCapture's buffers), readable while it runs
 * by byte offset since the start. A background process is never stopped for its output.
 */
export class RollingOutput extends HeadTailCapture implements OutputSink {
  constructor(label: string) {
    super(HEAD_BYTES + TAIL_BYTES, label, HEAD_BYTES);
  }

  /** Bytes kept in memory now. */
  get held(): number {
    return this.headBytes + this.tailBytes;
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
  stdin: InputFeed;
  stop: AbortController;
  done: Promise<ShellRun>;
  outcome?: ShellRun;
  finished?: number;
  /** The guard's check of a workspace-write process: undo what it made that runs later. */
  check?: (quick?: boolean) => void;
  /** What the guard undid since the last process_output / process_list call reported it. */
  undone: Undone[];
  /** What its boxes hold by mount (sandbox/holds.ts). */
  holds?: MountHolds;
}

/** Said beside a lost hold (holds.ts) of a background process, which is stopped for it. */
const STOPPED_LOOSE =
  "stopped the process: its sandbox no longer held this path (see the line before), so it could read or write " +
  "there what the sandbox keeps from it. Start it again if it is still needed: a new sandbox holds the path as it is now";

const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 2)} MiB`;

export class BackgroundProcesses {
  /**
   * Contained workspace-write calls that started processes (ToolSpec.startsProcesses) so far: one
   * started since an undo may have made it again. Not the process tools' calls (review g34: a model's
   * process_list every 1.5 s reset the count, and a loop re-arming a repository was never stopped).
   */
  private foregroundStarts = 0;

  /** Run a foreground call's processes (an undo that repeats across two of them is not a strike). */
  async duringForeground<T>(run: () => Promise<T>): Promise<T> {
    this.foregroundStarts++;
    return run();
  }

  private readonly runs = new Map<string, Background>();
  /** Per session: how many finished runs were let go to stay within the bounds. */
  private readonly evicted = new Map<string, number>();
  private next = 0;
  private closed = false;
  private readonly limits: BackgroundLimits;

  constructor(limits: Partial<BackgroundLimits> = {}) {
    this.limits = { ...BACKGROUND_LIMITS, ...limits };
  }

  start(
    session: string,
    command: string,
    plan: ShellPlan,
    opts: Omit<RunOptions, "signal" | "stdin" | "output">,
  ): string {
    if (this.closed) throw new ToolError("ECLOSED", "latch is shutting down; no new background process starts.");
    const mine = this.mine(session).filter((b) => b.outcome === undefined);
    if (mine.length >= MAX_PER_SESSION)
      throw new Refusal(
        `This session already runs ${mine.length} background processes (the limit is ${MAX_PER_SESSION}).`,
        "Stop one with process_kill (process_list shows them), then retry.",
      );
    this.makeRoom(session, 0);
    const held = this.held(session);
    if (held >= this.limits.sessionBudget)
      throw new Refusal(
        `This session's background processes hold ${mib(held)} of output and input, latch's budget per session (${mib(this.limits.sessionBudget)}); no new one starts.`,
        "Stop one with process_kill, or read what a process waits for with process_output, then retry.",
      );
    const id = `bg${++this.next}`;
    const stdin = new InputFeed();
    const stop = new AbortController();
    // What its boxes hold by mount, in any mode: one taken off from outside stops it (holds.ts).
    const holds = opts.sandbox?.confinement?.holds;
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
      holds,
    };
    const guard = opts.sandbox?.guard;
    const root = opts.sandbox?.confinement?.root;
    // Checked while it runs too, not only at the model's next read (guard-watch.ts).
    const unwatch =
      (guard || holds) && root
        ? watchGuard(root, (quick) => b.check?.(quick), undefined, {
            folders: () => holds?.folders() ?? [],
            // A lost mount is acted on at once, not after the burst settles.
            now: () => void (holds && !stop.signal.aborted && holds.lost().length > 0 && b.check?.(true)),
          })
        : undefined;
    /** Its processes have ended: a check now stops nothing. */
    let ending = false;
    guard?.hold(); // checked on while it runs; ended when it ends (below), or here if it never starts
    let running: Promise<ShellRun>;
    try {
      running = runShellPlan(plan, {
        ...opts,
        signal: stop.signal,
        stdin,
        output: { stdout: b.stdout, stderr: b.stderr },
      });
    } catch (err) {
      guard?.end();
      unwatch?.();
      throw err;
    }
    b.done = running
      .finally(() => unwatch?.())
      .then((r) => {
        // Checked as it ends, so an undo does not wait for the next read (sandbox/guard.ts).
        ending = true;
        b.check?.();
        b.outcome = r;
        b.finished = Date.now();
        stdin.close();
        this.makeRoom(session, 0);
        return r;
      })
      .finally(() => guard?.end());
    // Said once: a check that cannot run says so each time, every few seconds while the process runs.
    const said = (u: Undone) => b.undone.some((x) => x.path === u.path && x.what === u.what);
    // A process that makes again what was undone, at once, keeps it there most of the time (review g3:
    // `.git/commondir` made again in a loop was present at 15 of 20 git commands): stopped once one
    // path was undone REMADE_LIMIT times (one path: an `.envrc` a foreground call made, which this
    // check may find first, does not count against the process three times over).
    // Per path: undone how many times in a row with no foreground call started between (review g6: two
    // `git worktree add` calls made `.git/worktrees` again, each its own; review g7: not counting during
    // foreground calls at all kept a loop that made an included config again alive for as long as
    // foreground calls followed each other).
    const undoneAt = new Map<string, { times: number; starts: number; recent: number[] }>();
    let undoneLately: number[] = []; // of any path
    let many = false;
    b.check =
      guard || (holds && root)
        ? (quick = false) => {
            // A mount its box held taken off from outside: it could read or write there from then on, so
            // it is killed first (SIGKILL: no grace to write on in), then the guard puts things back.
            const lost = root ? lostReport(holds, root) : [];
            const stopping = lost.length > 0 && !stop.signal.aborted && !ending;
            if (stopping) stop.abort(new KillAtOnce("its sandbox lost a mount"));
            const found = [...(guard?.check(quick) ?? []), ...lost];
            for (const item of found.filter((u) => !said(u))) b.undone.push(item);
            if (stopping) b.undone.push({ path: lost[0].path, what: STOPPED_LOOSE });
            let again: Undone | undefined;
            // A check that could not look (NOT checked) cannot vouch for what the process does from
            // then on: it is stopped at once (review g43: such a check was no strike, and a process
            // that kept it failing ran on, each check failing open).
            const blind = found.find((u) => u.what.startsWith("NOT checked"));
            for (const u of found) {
              // An undo that failed counts too (review g35: a loop re-setting `chmod 555` on the folder
              // beat each set-aside, and a failure was no strike).
              if (u.what.startsWith("NOT ") && !u.what.startsWith("NOT undone")) continue;
              const was = undoneAt.get(u.path);
              const times = was?.starts === this.foregroundStarts ? was.times + 1 : 1;
              const now = Date.now();
              const recent = [...(was?.recent ?? []).filter((t) => now - t < REMADE_WINDOW_MS), now];
              undoneAt.set(u.path, { times, starts: this.foregroundStarts, recent });
              undoneLately = [...undoneLately.filter((t) => now - t < REMADE_WINDOW_MS), now];
              many ||= undoneLately.length >= UNDONE_WINDOW_LIMIT;
              if (times >= REMADE_LIMIT || recent.length >= REMADE_WINDOW_LIMIT || many) again ??= u;
            }
            if (blind !== undefined && !stop.signal.aborted) {
              stop.abort();
              b.undone.push({
                path: blind.path,
                what: "stopped the process: latch could not check what it changed (the line before), so it could not undo what it makes from then on",
              });
              return;
            }
            if (again === undefined || stop.signal.aborted) return;
            stop.abort();
            b.undone.push({
              path: again.path,
              what: many
                ? `stopped the process: latch undid ${UNDONE_WINDOW_LIMIT} things within a minute while it ran, this the last`
                : again.what.startsWith("NOT ")
                  ? `stopped the process: latch found this to undo ${REMADE_LIMIT} times or more while it ran, and could not undo it the last time`
                  : `stopped the process: latch undid this ${REMADE_LIMIT} times or more while it ran, and it was made again each time`,
            });
          }
        : undefined;
    this.runs.set(id, b);
    return id;
  }

  private mine(session: string): Background[] {
    return [...this.runs.values()].filter((b) => b.session === session);
  }

  private get(session: string, id: string): Background {
    this.makeRoom(session, 0);
    const b = this.runs.get(id);
    if (!b || b.session !== session)
      throw new ToolError(
        "ENOENT",
        `No background process \`${id}\` in this session (a finished one is kept ${Math.round(this.limits.finishedTtlMs / 60_000)} min, the newest ${this.limits.maxFinished}). process_list shows yours.`,
      );
    return b;
  }

  /** The boxes of contained foreground calls running now (any session). */
  private readonly callHolds = new Set<MountHolds>();

  /** A contained foreground call's boxes, while it runs (until the returned function is called). */
  holdDuring(holds: MountHolds): () => void {
    this.callHolds.add(holds);
    return () => void this.callHolds.delete(holds);
  }

  /**
   * What holds `abs` by a mount now (sandbox/holds.ts), said for a refusal: a running background
   * process's box (of any session), or a contained call's. A file tool's write there (a new file
   * renamed over it, or a removal) would take that hold off (review g22: a foreground call's too).
   */
  holding(abs: string): { by: string; fix: string } | undefined {
    for (const b of this.runs.values())
      if (b.outcome === undefined && b.holds?.holds(abs))
        return { by: `background process ${b.id}`, fix: `Stop ${b.id} first (process_kill), or wait for it to end` };
    for (const h of this.callHolds)
      if (h.holds(abs)) return { by: "a contained call running now", fix: "Wait for that call to end" };
    return undefined;
  }

  /** Bytes latch holds for the session: every run's output buffers and queued input. */
  held(session: string): number {
    let n = 0;
    for (const b of this.mine(session)) n += b.stdout.held + b.stderr.held + b.stdin.queued;
    return n;
  }

  /**
   * Let go of finished runs, oldest first: those past their time, those past the count, then as many
   * as it takes for `need` more bytes to fit the session's budget.
   */
  private makeRoom(session: string, need: number): void {
    const now = Date.now();
    const finished = this.mine(session)
      .filter((b) => b.finished !== undefined)
      .sort((a, b) => a.finished! - b.finished!);
    let held = this.held(session);
    let left = finished.length;
    for (const b of finished) {
      const stale = now - b.finished! >= this.limits.finishedTtlMs;
      const over = left > this.limits.maxFinished || held + need > this.limits.sessionBudget;
      if (!stale && !over) break;
      this.runs.delete(b.id);
      held -= b.stdout.held + b.stderr.held;
      left--;
      this.evicted.set(session, (this.evicted.get(session) ?? 0) + 1);
    }
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

  /**
   * Queue `text` for the process, then wait up to `waitMs` for it to take it. Past the per-process cap
   * (or the session's budget) it first waits up to `waitMs` for room, then refuses: nothing is queued.
   * Returns how many of these bytes the process took, and how many still wait in latch.
   */
  async input(
    session: string,
    id: string,
    text: string,
    waitMs: number,
  ): Promise<{ taken_bytes: number; queued_bytes: number; running: boolean }> {
    const b = this.get(session, id);
    const ended = () => b.outcome !== undefined || b.stdin.closed;
    if (ended()) throw new ToolError("EPIPE", `\`${id}\` has ended; its input is closed.`);
    // Counted first, copied only once it will be queued: a refused text costs no copy.
    const size = Buffer.byteLength(text);
    const cap = this.limits.inputCap;
    if (size > cap)
      throw new Refusal(
        `The text is ${size} bytes; latch queues at most ${mib(cap)} for a process.`,
        `Send it in parts of at most ${mib(cap)}, each after the process took the last (taken_bytes).`,
      );
    const fits = () => b.stdin.queued + size <= cap;
    await b.stdin.waitUntil(fits, waitMs);
    if (ended()) throw new ToolError("EPIPE", `\`${id}\` has ended; its input is closed.`);
    if (!fits())
      throw new Refusal(
        `\`${id}\` has not read its input: ${b.stdin.queued} bytes are still queued for it (latch queues at most ${mib(cap)} per process), so these ${size} bytes were not sent.`,
        "See what it waits for with process_output; send less, wait longer (wait_ms), or stop it with process_kill.",
      );
    this.makeRoom(session, size);
    const held = this.held(session);
    if (held + size > this.limits.sessionBudget)
      throw new Refusal(
        `This session's background processes already hold ${mib(held)} of output and input; ${size} more bytes would pass latch's budget per session (${mib(this.limits.sessionBudget)}), so nothing was sent.`,
        "Stop a process with process_kill, or send less, then retry.",
      );
    const start = b.stdin.taken + b.stdin.queued; // this text's first byte, counted from the feed's start
    b.stdin.write(Buffer.from(text));
    const takenOfThis = () => Math.max(0, Math.min(size, b.stdin.taken - start));
    await b.stdin.waitUntil(() => takenOfThis() === size, waitMs);
    const taken = takenOfThis();
    return { taken_bytes: taken, queued_bytes: ended() ? 0 : size - taken, running: !ended() };
  }

  /** Stop one process and wait until its whole run is gone. */
  async kill(session: string, id: string): Promise<ShellRun> {
    const b = this.get(session, id);
    b.stop.abort();
    b.stdin.close();
    return b.done;
  }

  /**
   * Check this session's running workspace-write processes (one, with `id`) and hand over what was
   * undone since the last time, each entry naming its process; process_output and process_list report it.
   */
  takeUndone(session: string, id?: string): Undone[] {
    const out: Undone[] = [];
    for (const b of id === undefined
      ? this.list(session).processes.map((x) => this.get(session, x.id))
      : [this.get(session, id)]) {
      if (b.outcome === undefined) b.check?.();
      for (const item of b.undone.map((u) => ({ ...u, what: `${u.what} (background ${b.id})` }))) out.push(item);
      b.undone = [];
    }
    return out;
  }

  list(session: string) {
    this.makeRoom(session, 0);
    const evicted = this.evicted.get(session) ?? 0;
    return {
      processes: this.mine(session).map((b) => ({
        id: b.id,
        command: b.command,
        running: b.outcome === undefined,
        started: new Date(b.started).toISOString(),
        ...(b.outcome ? { exit_code: b.outcome.exit_code } : {}),
        output_bytes: { stdout: b.stdout.total, stderr: b.stderr.total },
        ...(b.outcome ? {} : { input_queued_bytes: b.stdin.queued }),
      })),
      held_bytes: this.held(session),
      ...(evicted > 0
        ? {
            evicted: `${evicted} finished runs evicted (latch keeps a finished run ${Math.round(this.limits.finishedTtlMs / 60_000)} min, the newest ${this.limits.maxFinished}, within ${mib(this.limits.sessionBudget)} per session)`,
          }
        : {}),
    };
  }

  /** A session ended: stop its processes, wait for them, forget them. Returns how many were running. */
  async endSession(session: string): Promise<number> {
    const mine = [...this.runs.values()].filter((b) => b.session === session);
    const running = mine.filter((b) => b.outcome === undefined).length;
    for (const b of mine) {
      b.stop.abort();
      b.stdin.close();
    }
    await Promise.all(mine.map((b) => b.done));
    for (const b of mine) this.runs.delete(b.id);
    this.evicted.delete(session);
    return running;
  }

  /** latch is closing: no new process starts, and every running one is stopped and waited for. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const sessions = new Set([...this.runs.values()].map((b) => b.session));
    await Promise.all([...sessions].map((s) => this.endSession(s)));
  }
}
