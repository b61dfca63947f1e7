// The processes a run left behind. The child is made a session leader, so everything it starts stays
// in its session even when it moves to a process group of its own (GNU `timeout` does, for one).
// A process that calls setsid leaves the session, so every run also puts a variable (RUN_MARK_VAR)
// with a value of its own in the child's environment, which descendants inherit through fork and
// exec: on Linux /proc finds the session, the marked processes and the sessions they lead, and each
// of their groups is signalled, with the sessions of their children. Elsewhere only the child's own
// group is reached. A process that clears its environment, calls setsid and whose parent has ended
// escapes (a PID namespace or a cgroup would be needed).
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { errnoCode } from "../errors.js";

/** The variable that marks a run's processes; its value is unique to the run. */
export const RUN_MARK_VAR = "LATCH_RUN";

export interface RunIds {
  /** The child's pid: its session and first process group. */
  leader: number;
  /** The value of RUN_MARK_VAR in the child's environment. */
  mark: string;
  /** The child's start time in clock ticks since boot: no process of the run started earlier. */
  since: number;
}

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  pgrp: number;
  session: number;
  start: number;
}

const HAS_PROC = process.platform === "linux";

export function newRunMark(): string {
  return `${process.pid}-${randomBytes(8).toString("hex")}`;
}

function gone(err: unknown): boolean {
  return ["ENOENT", "ESRCH"].includes(errnoCode(err) ?? "");
}

function readStat(pid: number | string): Proc | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (err) {
    if (gone(err)) return undefined; // it ended while we looked
    throw err;
  }
  // After the command name "(…)": state, ppid, pgrp, session, …, starttime (the 20th field on).
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    pid: Number(pid),
    ppid: Number(f[1]),
    state: f[0],
    pgrp: Number(f[2]),
    session: Number(f[3]),
    start: Number(f[19]),
  };
}

function listProcesses(): Proc[] {
  // Synchronous on purpose: a short scan of /proc, made only while a run is ending.
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    const p = readStat(name);
    if (p) out.push(p);
  }
  return out;
}

/** When `pid` started, in clock ticks since boot; 0 where /proc cannot tell (every process qualifies). */
export function startTicks(pid: number): number {
  if (!HAS_PROC) return 0;
  return readStat(pid)?.start ?? 0;
}

function carriesMark(pid: number, mark: string): boolean {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch (err) {
    // Gone, or another user's process (then not one we started, and not one we could signal).
    if (gone(err) || ["EACCES", "EPERM"].includes(errnoCode(err) ?? "")) return false;
    throw err;
  }
  return `\0${env}`.includes(`\0${RUN_MARK_VAR}=${mark}\0`);
}

/** Living (not zombie) processes of a process group. */
export function livingInGroup(pgid: number): number[] {
  return listProcesses()
    .filter((p) => p.pgrp === pgid && p.state !== "Z")
    .map((p) => p.pid);
}

/** Living (not zombie) processes of a session. */
export function livingInSession(sid: number): number[] {
  return listProcesses()
    .filter((p) => p.session === sid && p.state !== "Z")
    .map((p) => p.pid);
}

/**
 * Living processes of a run: its session, the processes that carry its mark, the children of any of
 * them (one that cleared its environment and left the session is still its parent's child until
 * that parent dies), and every session such a process is in.
 */
function runMembers(run: RunIds): Proc[] {
  const living = listProcesses().filter((p) => p.state !== "Z");
  const sessions = new Set([run.leader]);
  // Only a process that started after the child can be one of its descendants: read just their environments.
  for (const p of living)
    if (!sessions.has(p.session) && p.start >= run.since && carriesMark(p.pid, run.mark)) sessions.add(p.session);
  for (let grew = true; grew;) {
    grew = false;
    const pids = new Set(living.filter((p) => sessions.has(p.session)).map((p) => p.pid));
    for (const p of living) {
      if (sessions.has(p.session) || !pids.has(p.ppid)) continue;
      sessions.add(p.session);
      grew = true;
    }
  }
  return living.filter((p) => sessions.has(p.session));
}

/**
 * Send `sig` to every process group of the run. With `signalled`, groups in it are left out and those
 * signalled now are added: a SIGTERM sent again reaches only the groups that formed since.
 */
export function signalRun(run: RunIds, sig: NodeJS.Signals, signalled?: Set<number>): void {
  const groups = new Set([run.leader]);
  if (HAS_PROC) for (const p of runMembers(run)) groups.add(p.pgrp);
  for (const g of groups) {
    if (signalled?.has(g)) continue;
    signalled?.add(g);
    try {
      process.kill(-g, sig);
    } catch (err) {
      if (errnoCode(err) !== "ESRCH") throw err; // that group is already gone
    }
  }
}

/** Does anything of the run still live? Zombies waiting for init to reap them run nothing. */
export function runAlive(run: RunIds): boolean {
  if (HAS_PROC) return runMembers(run).length > 0;
  try {
    process.kill(-run.leader, 0);
    return true;
  } catch (err) {
    if (errnoCode(err) === "ESRCH") return false;
    if (errnoCode(err) === "EPERM") return true;
    throw err;
  }
}
