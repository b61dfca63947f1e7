// A pids limit for latch running as root. RLIMIT_NPROC (set by the launcher inside the sandbox) binds
// every other user, counted per user namespace, but the kernel never applies it to uid 0, which a
// root latch keeps inside its namespace. So as root each run gets a pids cgroup of its own (reused
// from run to run once empty: CgroupPool) when a
// writable pids controller exists: cgroup v1's `pids` hierarchy, or v2's root cgroup with `pids` in its
// subtree_control. The spawn joins it (a shell writes its own pid, then execs bwrap), so every process
// of the run is inside from the first fork. Elsewhere there is no such limit, and the call's time
// limit is the bound: docs/shell.md says so.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { errnoCode } from "../errors.js";

/** The folder under which per-run pids cgroups can be made, or undefined. */
export function pidsCgroupParent(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let self: string;
  try {
    self = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined; // not Linux, or no /proc: no cgroups to use
  }
  const v1 = /^\d+:pids:(\S*)$/m.exec(self);
  const candidates: string[] = [];
  if (v1) candidates.push(path.join("/sys/fs/cgroup/pids", v1[1]));
  if (/^0::\/$/m.test(self)) {
    for (const dir of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
      try {
        if (readFileSync(path.join(dir, "cgroup.subtree_control"), "utf8").split(/\s+/).includes("pids"))
          candidates.push(dir);
      } catch {
        // no v2 hierarchy mounted here
      }
    }
  }
  for (const dir of candidates) {
    const probe = path.join(dir, `latch-probe-${process.pid}`);
    try {
      mkdirSync(probe);
      writeFileSync(path.join(probe, "pids.max"), "1");
      rmdirSync(probe);
      sweep(dir);
      return dir;
    } catch {
      try {
        rmdirSync(probe);
      } catch {
        // it was never made
      }
    }
  }
  return undefined;
}

/**
 * Remove the empty cgroups of latch processes that have ended (one killed mid-call never removed its
 * own). rmdir refuses a cgroup that still holds a process, so a live run's is never touched.
 */
function sweep(dir: string): void {
  for (const e of readdirSync(dir)) {
    const m = /^latch-(\d+)-[0-9a-f]+$/.exec(e);
    if (!m || existsSync(`/proc/${m[1]}`)) continue;
    try {
      rmdirSync(path.join(dir, e));
    } catch {
      // still holds a process, or already gone: either way not ours to force
    }
  }
}

/** Make the run's cgroup with its limit; returns its folder. */
export function makeRunCgroup(parent: string, mark: string, limit: number): string {
  const dir = path.join(parent, `latch-${mark}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "pids.max"), String(limit));
  return dir;
}

/** Empty pids cgroups a containment keeps for its next runs, at most this many. */
const POOL_MAX = 4;

/**
 * The pids cgroups of one containment (one host), reused: a run takes an empty one (made when none is
 * free) and gives it back when it ends. Making and removing one per run cost a mkdir, a write and an
 * rmdir, and the rmdir often waited for the pid namespace's teardown (EBUSY, 20 ms a try) before the
 * call could return. A cgroup is handed out only while it holds no process (`cgroup.procs` empty), so
 * each run still has a limit of its own; one still emptying waits in the pool. The free ones outlive
 * the host, empty, until latch exits; the next start's sweep removes them.
 */
export class CgroupPool {
  private readonly free: string[] = [];

  constructor(
    readonly parent: string,
    readonly limit: number,
  ) {}

  take(): string {
    for (let i = 0; i < this.free.length; i++) {
      if (isEmpty(this.free[i])) return this.free.splice(i, 1)[0];
    }
    return makeRunCgroup(this.parent, `${process.pid}-${randomBytes(8).toString("hex")}`, this.limit);
  }

  give(dir: string): Promise<void> {
    if (this.free.length < POOL_MAX) {
      this.free.push(dir);
      return Promise.resolve();
    }
    return removeRunCgroup(dir);
  }
}

function isEmpty(dir: string): boolean {
  try {
    return readFileSync(path.join(dir, "cgroup.procs"), "utf8").trim() === "";
  } catch {
    return false; // gone (removed by hand): never handed out
  }
}

/** Remove the run's cgroup once its processes are gone (a process being reaped may hold it a moment). */
export async function removeRunCgroup(dir: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      rmdirSync(dir);
      return;
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ENOENT") return;
      if (code !== "EBUSY" || tries >= 100) throw err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
