// Loaded into every test file's process by scripts/test.mjs (`--import`, which the test runner hands
// on to each file's process, never to the processes a test starts). Files run side by side, so:
// - each file gets a state home of its own (XDG_STATE_HOME, a folder in the run's): a latch a test
//   starts without --state-dir keeps its ledger, logs and approval queue apart from another file's;
// - at exit it appends one line with the file's wall time and CPU time to LATCH_TEST_TIMES. The CPU
//   counts the processes the file started and waited for (the CLI, shells, bwrap: /proc/self/stat's
//   cutime and cstime): on a loaded machine wall time says more about the neighbours than the file.
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

const out = process.env.LATCH_TEST_TIMES;
const file = process.argv[1];
/** Clock ticks per second of /proc/PID/stat's times: USER_HZ, 100 on every Linux the suite runs on. */
const TICKS = 100;

function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 16 and 17 of stat (cutime, cstime) are 13 and 14 here, counted from field 3 (the state).
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS;
  } catch {
    return 0; // no /proc (macOS): the file's own CPU only
  }
}

const isTestFile = file !== undefined && /\.test\.[cm]?[jt]s$/.test(file);
if (isTestFile && process.env.LATCH_TEST_STATE_HOME)
  process.env.XDG_STATE_HOME = mkdtempSync(path.join(process.env.LATCH_TEST_STATE_HOME, "file-"));

if (out && isTestFile) {
  process.on("exit", () => {
    const own = process.cpuUsage();
    const line = {
      file: path.relative(process.cwd(), file).split(path.sep).join("/"),
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((own.user + own.system) / 1000 + childrenCpuMs()),
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
