// Does a sandbox work here? Looked up once per process and sandbox program (bwrap, sandbox-exec): bwrap
// must be on latch's PATH (as captured at start-up) and must start a process with the namespaces every
// call will use. The answer names what failed and the fix.
import { pidsCgroupParent } from "./cgroup.js";
import { BwrapContainment } from "./linux.js";
import { findBwrap, runProbe, type ProbeRun } from "./probe-run.js";
import { probeSeatbelt } from "./seatbelt.js";
import type { ProbeResult } from "./types.js";

const INSTALL =
  "Install bubblewrap so that `bwrap` is on latch's PATH (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`; Arch: `sudo pacman -S bubblewrap`)";
const USERNS =
  "bwrap is installed but cannot make a user namespace here. On Ubuntu 24.04+ AppArmor blocks them: add an AppArmor profile for /usr/bin/bwrap that allows `userns` (or set `sysctl kernel.apparmor_restrict_unprivileged_userns=0`); in a container, run it with user namespaces allowed (e.g. docker --security-opt seccomp=unconfined)";
const OR_OFF = ' — or set `_containment = "auto"` (run uncontained, with stricter rules) or `"off"`.';

/** For hosts with no tool that starts processes. */
export const NOT_PROBED: ProbeResult = {
  available: false,
  reason: "this host offers no tool that starts processes, so no sandbox was looked for",
  fix: "None needed.",
};

const cache = new Map<string, Promise<ProbeResult>>();

/** The sandbox available to processes latch starts, given the PATH folders latch started with. */
export function probeContainment(pathDirs: readonly string[]): Promise<ProbeResult> {
  if (process.platform === "darwin") return once("sandbox-exec", probeSeatbelt);
  if (process.platform !== "linux")
    return Promise.resolve({
      available: false,
      reason: `latch has no sandbox for ${process.platform}`,
      fix: `Run latch on Linux with bubblewrap for containment${OR_OFF}`,
    });
  const bwrap = findBwrap(pathDirs);
  if (bwrap === undefined)
    return Promise.resolve({
      available: false,
      reason: "bubblewrap (`bwrap`) is not on latch's PATH",
      fix: INSTALL + OR_OFF,
    });
  return once(bwrap, () => tryBwrap(bwrap));
}

/** One probe per sandbox program and process: every host of the process asks the same question. */
function once(key: string, probe: () => Promise<ProbeResult>): Promise<ProbeResult> {
  let p = cache.get(key);
  if (!p) {
    p = probe();
    cache.set(key, p);
  }
  return p;
}

/**
 * The run the command's entry started before the program loaded (src/cli/main.ts): this process's
 * probe of that bwrap, as if probeContainment had started it. A host that finds another bwrap on its
 * PATH, or none, probes as before; one that probes nothing leaves it unread.
 */
export function adoptProbe(run: ProbeRun): void {
  if (process.platform === "linux" && !cache.has(run.bwrap)) cache.set(run.bwrap, resultOf(run));
}

function tryBwrap(bwrap: string): Promise<ProbeResult> {
  return resultOf(runProbe(bwrap));
}

async function resultOf({ bwrap, failed }: ProbeRun): Promise<ProbeResult> {
  const said = await failed;
  if (said === undefined)
    return {
      available: true,
      containment: new BwrapContainment(bwrap, pidsCgroupParent()),
      detail: `bubblewrap (${bwrap})`,
    };
  return { available: false, reason: `${bwrap} fails here: ${said}`, fix: USERNS + OR_OFF };
}
