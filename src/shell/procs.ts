// The processes a run left behind. The child is made a session leader, so everything it starts stays
// in its session even when it moves to a process group of its own (GNU `timeout` does, for one):
// on Linux the whole session is found in /proc and each of its groups is signalled. Elsewhere only
// the child's own group is reached. A process that starts a new session (setsid) escapes both.
import { readdirSync, readFileSync } from "node:fs";
import { errnoCode } from "../errors.js";

interface Proc {
  pid: number;
  state: string;
  pgrp: number;
  session: number;
}

const HAS_PROC = process.platform === "linux";

function listProcesses(): Proc[] {
  // Synchronous on purpose: a short scan of /proc, made only while a run is ending.
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch (err) {
      if (["ENOENT", "ESRCH"].includes(errnoCode(err) ?? "")) continue; // it ended while we looked
      throw err;
    }
    // After the command name "(…)": state, ppid, pgrp, session, …
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.push({ pid: Number(name), state: f[0], pgrp: Number(f[2]), session: Number(f[3]) });
  }
  return out;
}

/** Living (not zombie) processes of a process group. */
export function livingInGroup(pgid: number): number[] {
  return listProcesses().filter((p) => p.pgrp === pgid && p.state !== "Z").map((p) => p.pid);
}

/** Living (not zombie) processes of a session. */
export function livingInSession(sid: number): number[] {
  return listProcesses().filter((p) => p.session === sid && p.state !== "Z").map((p) => p.pid);
}

/** Send `sig` to the leader's group and to every other group of its session. */
export function signalRun(leader: number, sig: NodeJS.Signals): void {
  const groups = new Set([leader]);
  if (HAS_PROC) for (const p of listProcesses()) if (p.session === leader && p.state !== "Z") groups.add(p.pgrp);
  for (const g of groups) {
    try {
      process.kill(-g, sig);
    } catch (err) {
      if (errnoCode(err) !== "ESRCH") throw err; // that group is already gone
    }
  }
}

/** Does anything of the run still live? Zombies waiting for init to reap them run nothing. */
export function runAlive(leader: number): boolean {
  if (HAS_PROC) return livingInSession(leader).length > 0;
  try {
    process.kill(-leader, 0);
    return true;
  } catch (err) {
    if (errnoCode(err) === "ESRCH") return false;
    if (errnoCode(err) === "EPERM") return true;
    throw err;
  }
}
