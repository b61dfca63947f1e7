// Bounded processes: the one runner for local_shell, run_tool, background processes and policy
// programs (the ACP client's terminals start the same steps in the editor). Each run is a new session and process group
// led by the child, and its environment carries a mark of its own, so a timeout, a cancellation or the
// end of the run reaches every descendant that stayed in the session or kept the mark (procs.ts):
// SIGTERM first, SIGKILL 2 s later, repeated for processes that appear after it. The run ends only
// when the child has exited, its pipes are closed and nothing of the run is left.
// With a sandbox (src/sandbox), the child is bwrap and the program runs in a pid namespace of its own:
// when bwrap ends, the kernel kills everything left inside, setsid or not; the mark still finds them
// from outside while they run.
import { spawn } from "node:child_process";
import { Socket } from "node:net";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { errnoCode } from "../errors.js";
import type { InputFeed } from "./input-feed.js";
import { launchFor, type CallContainment } from "../sandbox/call.js";
import type { Command, Launch } from "../sandbox/types.js";
import type { Sink } from "./capture.js";
import { newRunMark, RUN_MARK_VAR, runAlive, signalRun, startTicks, type RunIds } from "./procs.js";
import { Termination } from "./termination.js";

/** The program (`file`: absolute; `argv0`: as it should see itself), its arguments, folder and environment, and its bounds. */
export interface BoundedSpec extends Command {
  /** Given to the child on stdin (a feed stays open for a background process's input); otherwise /dev/null. */
  stdin?: string | InputFeed;
  /** Absolute time (Date.now() scale) after which the run is stopped. */
  deadline: number;
  signal: AbortSignal;
  stdout: Sink;
  stderr: Sink;
  /** The call's containment; a contained one wraps the spawn in the sandbox. */
  sandbox?: CallContainment;
  /** How long SIGTERM is given before SIGKILL (default KILL_GRACE_MS; 0: SIGKILL at once). */
  graceMs?: number;
}

export interface BoundedOutcome {
  /** The process group id (the child's pid); undefined when the spawn failed. */
  pgid?: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** A sink's limit was crossed and the run was stopped for it. */
  overLimit: boolean;
  /** Why the program could not be started (ENOENT, EACCES, …). */
  spawnError?: string;
  durationMs: number;
}

const KILL_GRACE_MS = 2000;
/** After SIGKILL, how long an escaped process may hold the pipes before latch stops reading them. */
const PIPE_GRACE_MS = 1000;

/** An outcome before anything ran: no exit yet, nothing stopped. */
export function noOutcome(): BoundedOutcome {
  return { exitCode: null, signal: null, timedOut: false, cancelled: false, overLimit: false, durationMs: 0 };
}

export function runBounded(spec: BoundedSpec): Promise<BoundedOutcome> {
  const started = Date.now();
  if (spec.signal.aborted) return Promise.resolve({ ...noOutcome(), cancelled: true });
  const mark = newRunMark();
  const cmd = { file: spec.file, argv0: spec.argv0, args: spec.args, cwd: spec.cwd, env: spec.env };
  let launch: Launch | undefined;
  try {
    launch = spec.sandbox ? launchFor(spec.sandbox, cmd) : undefined;
  } catch (err) {
    return Promise.resolve({ ...noOutcome(), spawnError: `ESANDBOX: ${(err as Error).message}`, durationMs: 0 });
  }
  const l = launch ?? { ...cmd, cleanup: async () => undefined };
  const child = spawn(l.file, l.args, {
    argv0: l.argv0,
    cwd: l.cwd,
    env: { ...l.env, [RUN_MARK_VAR]: mark },
    detached: true, // a new session and process group, led by the child
    stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", ...extraFds(l)],
  });
  // A proxied network grant: the in-box bridge sends each connection it accepted (sandbox/proxy/).
  const accept = l.accept;
  if (accept) child.on("message", (_m, handle) => handle instanceof Socket && accept(handle));
  const fd3 = child.stdio[3] as Writable | null | undefined;
  if (l.fd3 && fd3) {
    // Read whole by the sandbox before it starts the program; a sandbox that died first closed it (EPIPE).
    fd3.on("error", () => undefined);
    fd3.end(l.fd3);
  }
  // The sandbox's word on how the program ended (sandbox/init.ts): its init writes once, as it exits.
  let written = "";
  const status = l.status ? (child.stdio[l.status.fd] as Readable | null | undefined) : undefined;
  status?.on("data", (c: Buffer) => {
    if (written.length < 64) written += c.toString("latin1");
  });
  status?.on("error", () => undefined);
  const pgid = child.pid;
  // Read now, while the child cannot have been reaped yet (node reaps it on a later tick).
  const run: RunIds | undefined = pgid === undefined ? undefined : { leader: pgid, mark, since: startTicks(pgid) };
  const grace = spec.graceMs ?? KILL_GRACE_MS;
  // SIGTERM once to each group; a sandbox's own process group never has it (Launch.wrapsProgram).
  const termed = new Set<number>(l.wrapsProgram && pgid !== undefined ? [pgid] : []);
  const stop = new Termination({
    kill: (sig) => run && signalRun(run, sig, sig === "SIGTERM" ? termed : undefined),
    alive: () => run !== undefined && runAlive(run),
    graceMs: grace,
    signal: spec.signal,
    deadline: spec.deadline,
    afterKill: {
      ms: PIPE_GRACE_MS,
      run: () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      },
    },
  });
  const out: BoundedOutcome = { ...noOutcome(), pgid };
  for (const [stream, sink] of [
    [child.stdout!, spec.stdout],
    [child.stderr!, spec.stderr],
  ] as const)
    stream.on("data", (c: Buffer) => {
      if (!sink.write(c)) stop.stop("limit");
    });
  if (child.stdin) {
    // A child that exits without reading its stdin makes the write fail with EPIPE: not an error of the run.
    child.stdin.on("error", () => undefined);
    if (typeof spec.stdin === "string") child.stdin.end(spec.stdin);
    else spec.stdin?.attach(child.stdin);
  }
  child.on("exit", (code, sig) => {
    out.exitCode = code;
    out.signal = sig;
    stop.childExited();
  });
  return new Promise((resolve) => {
    const done = async (failed?: Error) => {
      if (failed) {
        out.spawnError = `${errnoCode(failed) ?? "ERROR"}: ${failed.message}`;
        stop.dispose();
      } else {
        // The group may still hold processes that closed their pipes: wait for them, until SIGKILL
        // has had its effect. Zombies waiting for init to reap them run nothing, so they do not count.
        await stop.settle(PIPE_GRACE_MS);
      }
      if (l.status && out.signal === null) {
        // The sandbox program's code mirrors the program's: a death by signal shows as 128+n there.
        const ending = l.status.ending(written, out.exitCode);
        if (ending) Object.assign(out, ending);
      }
      // A pids cgroup that cannot be removed stays empty and limits nothing: not a failure of the run.
      await l.cleanup().catch(() => undefined);
      resolve({
        ...out,
        timedOut: stop.timedOut,
        cancelled: stop.cancelled,
        overLimit: stop.overLimit,
        durationMs: Date.now() - started,
      });
    };
    let settled = false;
    const once = (failed?: Error) => {
      if (settled) return;
      settled = true;
      void done(failed);
    };
    child.on("close", () => once());
    // Only a failed spawn (no such program, no permission, cwd missing) ends the run here; with a
    // process running, its exit and the pipes' close end it.
    child.on("error", (err) => pgid === undefined && once(err));
  });
}

/**
 * Descriptors 3 and up: the sandbox's seccomp filter (3, written), node's IPC channel for the network
 * bridge (4, proxy/bridge.ts BRIDGE_FD) and the init's status pipe (5, init.ts STATUS_FD, read).
 */
function extraFds(l: Pick<Launch, "fd3" | "status" | "accept">): ("pipe" | "ignore" | "ipc")[] {
  const out: ("pipe" | "ignore" | "ipc")[] = [];
  if (l.fd3) out[0] = "pipe";
  if (l.accept) out[1] = "ipc";
  if (l.status) out[l.status.fd - 3] = "pipe";
  return Array.from(out, (x) => x ?? "ignore");
}

/** The sh-style exit status: the code, or 128 + the signal number. */
export function exitStatus(o: Pick<BoundedOutcome, "exitCode" | "signal">): number | null {
  if (o.exitCode !== null) return o.exitCode;
  if (o.signal) return 128 + (constants.signals[o.signal] ?? 0);
  return null;
}
