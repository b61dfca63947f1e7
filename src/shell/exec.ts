// Bounded processes, shared by local_shell and run_tool. Each run gets its own process group, so a
// timeout, a cancellation or the end of the run reaches every descendant that stayed in the group:
// SIGTERM first, SIGKILL 2 s later. The run ends only when the child has exited, its pipes are
// closed and the group is gone.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { errnoCode } from "../errors.js";
import type { Sink } from "./capture.js";

export interface BoundedSpec {
  /** The absolute program to execute. */
  file: string;
  /** argv[0] as the program should see it. */
  argv0?: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Given to the child on stdin; otherwise stdin is /dev/null. */
  stdin?: string;
  /** Absolute time (Date.now() scale) after which the run is stopped. */
  deadline: number;
  signal: AbortSignal;
  stdout: Sink;
  stderr: Sink;
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

export const KILL_GRACE_MS = 2000;
/** After SIGKILL, how long an escaped process may hold the pipes before latch stops reading them. */
const PIPE_GRACE_MS = 1000;

export function runBounded(spec: BoundedSpec): Promise<BoundedOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const out: BoundedOutcome = { exitCode: null, signal: null, timedOut: false, cancelled: false, overLimit: false, durationMs: 0 };
    if (spec.signal.aborted) {
      resolve({ ...out, cancelled: true });
      return;
    }
    const child = spawn(spec.file, spec.args, {
      argv0: spec.argv0,
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // a new session and process group, led by the child
      stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const pgid = child.pid;
    out.pgid = pgid;
    const timers: NodeJS.Timeout[] = [];
    let terminating = false;
    let terminatedAt = 0;
    let exited = false;
    let settled = false;

    const killGroup = (sig: NodeJS.Signals) => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, sig);
      } catch (err) {
        if (errnoCode(err) !== "ESRCH") throw err; // the group is already gone
      }
    };
    const terminate = () => {
      if (terminating) return;
      terminating = true;
      terminatedAt = Date.now();
      killGroup("SIGTERM");
      timers.push(
        setTimeout(() => {
          killGroup("SIGKILL");
          timers.push(setTimeout(() => { child.stdout?.destroy(); child.stderr?.destroy(); }, PIPE_GRACE_MS));
        }, KILL_GRACE_MS),
      );
    };
    const onAbort = () => {
      out.cancelled = true;
      terminate();
    };
    spec.signal.addEventListener("abort", onAbort, { once: true });
    const remaining = Math.max(0, spec.deadline - Date.now());
    timers.push(setTimeout(() => { if (!exited || groupAlive(pgid)) { out.timedOut = true; terminate(); } }, remaining));

    child.stdout!.on("data", (c: Buffer) => { if (!spec.stdout.write(c)) { out.overLimit = true; terminate(); } });
    child.stderr!.on("data", (c: Buffer) => { if (!spec.stderr.write(c)) { out.overLimit = true; terminate(); } });
    if (child.stdin) {
      // A child that exits without reading its stdin makes the write fail with EPIPE: not an error of the run.
      child.stdin.on("error", () => undefined);
      child.stdin.end(spec.stdin);
    }
    child.on("exit", (code, sig) => {
      exited = true;
      out.exitCode = code;
      out.signal = sig;
      // Whatever the child left running in its group does not outlive the call.
      if (groupAlive(pgid)) terminate();
    });
    const finish = async () => {
      if (settled) return;
      settled = true;
      // The group may still hold processes that closed their pipes: wait for them, until SIGKILL
      // has had its effect. Zombies waiting for init to reap them run nothing, so they do not count.
      while (groupAlive(pgid) && !zombieOnly(pgid)) {
        terminate();
        if (Date.now() > terminatedAt + KILL_GRACE_MS + PIPE_GRACE_MS) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      for (const t of timers) clearTimeout(t);
      spec.signal.removeEventListener("abort", onAbort);
      out.durationMs = Date.now() - started;
      resolve(out);
    };
    child.on("close", () => void finish());
    child.on("error", (err) => {
      // The spawn failed (no such program, no permission, cwd missing): there is no process.
      if (pgid !== undefined && !exited) return;
      out.spawnError = `${errnoCode(err) ?? "ERROR"}: ${err.message}`;
      for (const t of timers) clearTimeout(t);
      spec.signal.removeEventListener("abort", onAbort);
      settled = true;
      out.durationMs = Date.now() - started;
      resolve(out);
    });
  });
}

/** Is any process left in the group? */
export function groupAlive(pgid: number | undefined): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    if (errnoCode(err) === "ESRCH") return false;
    if (errnoCode(err) === "EPERM") return true;
    throw err;
  }
}

/** Orphaned zombies keep a group "alive" until init reaps them, though nothing runs: stop waiting then. */
function zombieOnly(pgid: number | undefined): boolean {
  if (pgid === undefined || process.platform !== "linux") return false;
  return livingInGroup(pgid).length === 0;
}

/** The pids of processes in a group that are not zombies (Linux /proc). Tests use it too. */
export function livingInGroup(pgid: number): number[] {
  // Synchronous on purpose: a short scan of /proc, used only while a run is ending.
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch (err) {
      if (["ENOENT", "ESRCH"].includes(errnoCode(err) ?? "")) continue; // it ended while we looked
      throw err;
    }
    // Fields after the command name "(…)": state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") pids.push(Number(name));
  }
  return pids;
}

/** The sh-style exit status: the code, or 128 + the signal number. */
export function exitStatus(o: Pick<BoundedOutcome, "exitCode" | "signal">): number | null {
  if (o.exitCode !== null) return o.exitCode;
  if (o.signal) return 128 + (constants.signals[o.signal] ?? 0);
  return null;
}
