// The attacker of review g60: a real process exchanging two folders in the workspace, as fast as it
// can, until stopped. renameat2(RENAME_EXCHANGE) swaps them in one step, so both names always exist;
// Node cannot call it, python3's ctypes can. Three renames would not do: the gaps where a folder is
// missing let a write make a new file under the other name, which is not the attack.
import { spawnSync } from "node:child_process";
import { startRacer, type Racer } from "./racer.js";

/** The exchanger's python source: `python3 -c EXCHANGE A B` (run in the sandbox too: race-grep-oracle). */
export const EXCHANGE = `
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = (os.fsencode(p) for p in sys.argv[1:3])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps = 0
def stop(*_):
    sys.stdout.write("swaps %d\\n" % swaps)
    sys.stdout.flush()
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
swaps = 1
print("ready", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
        swaps += 1
`;

/** Why folders cannot be exchanged here (no python3, or a libc without renameat2), or undefined when they can. */
export function cannotExchange(): string | undefined {
  const probe = spawnSync("python3", ["-c", "import ctypes; ctypes.CDLL(None).renameat2"], { stdio: "ignore" });
  return probe.status === 0 ? undefined : "exchanging folders needs python3 and a libc with renameat2";
}

/** Start exchanging the folders `a` and `b`; stop() ends it and says how many exchanges were made. */
export function startExchanger(a: string, b: string): Promise<Racer> {
  return startRacer("python3", ["-c", EXCHANGE, a, b]);
}
