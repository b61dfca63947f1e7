// The bwrap probe's one run (find bwrap on PATH, start /bin/sh in the namespaces every call uses),
// apart from probe.ts and the containment it loads: small enough for the command's entry
// (src/cli/main.ts) to start it before the program loads, so that bwrap's ~20 ms pass on another
// core while the program loads, instead of being waited for at the end of the host's start.
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// node:child_process is loaded at the run: the entry imports this file for every command, --version
// too, and loading child_process costs ~2 ms that --version does not need.
const childProcess = () => createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");

/** The namespace flags, shared with the box of every call (bwrap.ts) so the probe tests what calls use. */
export const NAMESPACE_ARGS: readonly string[] = [
  "--unshare-user",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
];

/** A probe run: which bwrap, and what it said (undefined: the box started; else bwrap's last word). */
export interface ProbeRun {
  bwrap: string;
  failed: Promise<string | undefined>;
}

/** PATH as absolute directories only: a relative entry would make lookups depend on the cwd. */
export function pathDirs(raw: string | undefined): string[] {
  return (raw ?? "").split(path.delimiter).filter((d) => d !== "" && path.isAbsolute(d));
}

export function findBwrap(dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    const p = path.join(dir, "bwrap");
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not in this folder: the next one
    }
  }
  return undefined;
}

export function runProbe(bwrap: string): ProbeRun {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", ...NAMESPACE_ARGS];
  args.push("--unshare-net", "--", "/bin/sh", "-c", "exit 0");
  const failed = new Promise<string | undefined>((resolve) => {
    childProcess().execFile(bwrap, args, { timeout: 10_000, env: { PATH: "/usr/bin:/bin" } }, (err, _out, stderr) =>
      resolve(err ? String(stderr).trim().split("\n").pop() || err.message : undefined),
    );
  });
  return { bwrap, failed };
}

/** The entry's early run, on Linux with a bwrap on PATH (the PATH latch started with, as the host reads it). */
export function startProbe(rawPath: string | undefined): ProbeRun | undefined {
  if (process.platform !== "linux") return undefined;
  const bwrap = findBwrap(pathDirs(rawPath));
  return bwrap === undefined ? undefined : runProbe(bwrap);
}
