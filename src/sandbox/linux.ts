// The bubblewrap Containment: every launch is `bwrap … -- launcher program args`, joined to a pids
// cgroup of its own first when latch runs as root and one can be made (cgroup.ts).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { Socket } from "node:net";
import { bridgeEnvironment } from "./proxy/bridge.js";
import { bwrapArgs, PIDS_LIMIT, pickLauncher, type Launcher } from "./bwrap.js";
import { programEnding, STATUS_FD } from "./init.js";
import { sandboxEnvironment } from "./masks.js";
import { unixSocketFilter } from "./seccomp.js";
import { CgroupPool, makeRunCgroup, removeRunCgroup } from "./cgroup.js";
import type { Command, Confinement, Containment, Launch } from "./types.js";

export class BwrapContainment implements Containment {
  readonly kind = "bubblewrap";
  private readonly launcher: Launcher = pickLauncher();
  /** The socket(AF_UNIX) filter for calls without network (undefined on an architecture without a table). */
  private readonly filter = unixSocketFilter();

  constructor(
    /** The absolute bwrap the probe ran. */
    readonly bwrap: string,
    /** Where per-run pids cgroups go (root only), or undefined. */
    readonly cgroupParent: string | undefined,
    /** Reuse empty pids cgroups from run to run (CgroupPool); false: one made and removed per run (bench/sandbox.ts compares). */
    reuse = true,
  ) {
    this.pool = cgroupParent !== undefined && reuse ? new CgroupPool(cgroupParent, PIDS_LIMIT) : undefined;
    this.join = cgroupParent !== undefined ? joinLine(cgroupParent) : "";
  }

  /** The shell line that moves the launching shell into the run's cgroup ($0) before it execs bwrap. */
  private readonly join: string;

  private readonly pool: CgroupPool | undefined;

  launch(cmd: Command, c: Confinement): Launch {
    const filter = c.network ? undefined : this.filter;
    const args = bwrapArgs(cmd, c, this.launcher, filter !== undefined);
    const env = {
      ...sandboxEnvironment(cmd.env),
      TMPDIR: "/tmp", // the private one
      // The workspace is a mount point inside: git would stop looking for a repository above it.
      GIT_DISCOVERY_ACROSS_FILESYSTEM: "1",
      ...(c.proxy ? bridgeEnvironment() : {}),
    };
    // Where the process's cwd is (the sandbox's own is set by --chdir): a folder that exists outside too.
    const proxy = c.proxy;
    const base = {
      env,
      cwd: "/",
      wrapsProgram: true as const,
      cleanup: async () => undefined,
      ...(filter ? { fd3: filter } : {}),
      ...(this.launcher.perl ? { status: { fd: STATUS_FD, ending: programEnding } } : {}),
      ...(proxy ? { accept: (s: Socket) => proxy.accept(s) } : {}),
    };
    // Noted last before the spawn: a rename outside from here on takes a mount away (holds.ts).
    if (this.cgroupParent === undefined) {
      const held = c.holds?.take(args);
      return { ...base, file: this.bwrap, args, cleanup: async () => held?.release() };
    }
    const pool = this.pool;
    const dir = pool
      ? pool.take()
      : makeRunCgroup(this.cgroupParent, `${process.pid}-${randomBytes(8).toString("hex")}`, PIDS_LIMIT);
    const held = c.holds?.take(args);
    return {
      ...base,
      file: "/bin/sh",
      args: ["-c", `${this.join} && exec "$@"`, dir, this.bwrap, ...args],
      cleanup: async () => {
        held?.release();
        await (pool ? pool.give(dir) : removeRunCgroup(dir));
      },
    };
  }
}

/**
 * Moving a process by writing its pid to `cgroup.procs` takes the kernel's global
 * cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period: ~10 ms a call
 * (bench/sandbox.ts). On cgroup v1 (the `pids` hierarchy), writing 0 to `tasks` moves only the
 * calling thread, and the kernel (since 6.0) skips that lock for it; the shell has one thread, so the
 * whole process moves, and everything it execs and forks is born inside. cgroup v2 has no such file
 * (`cgroup.threads` needs a threaded subtree): there the pid goes to `cgroup.procs`.
 */
export function joinLine(parent: string): string {
  return existsSync(path.join(parent, "tasks")) ? 'echo 0 > "$0/tasks"' : 'echo $$ > "$0/cgroup.procs"';
}
