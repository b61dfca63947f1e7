// The test runner's file list, found by folder: every test/**/*.test.ts. Files run side by side
// (LATCH_TEST_JOBS at once, by default twice the cores: most of a file's time is spent waiting on
// processes, fsyncs and sockets), the longest first; the few that cannot share the machine run after
// them, one at a time (SERIAL, each with its reason). `--stress` runs the stress files alone at their
// full counts: test/stress/** and every file whose loops LATCH_STRESS counts (test/helpers/stress.ts).
// `npm test` passes `--build --check`: `npm run build` first and `npm run check` beside the build and
// the files side by side (CHECK). `--times=FILE` keeps each file's times there (JSON lines). Any other
// arguments are file filters (substrings of the path), for running a part while working on it. At the
// end it prints each file's wall and CPU time (scripts/test-each-file.mjs) as TAP comments.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const stressOnly = args.includes("--stress");
const build = args.includes("--build");
const check = args.includes("--check");
const keepTimes = args.find((a) => a.startsWith("--times="))?.slice("--times=".length);
const filters = args.filter((a) => !a.startsWith("--"));
const unknown = args.filter((a) => a.startsWith("--") && !/^--(stress|build|check|times=.+)$/.test(a));
if (unknown.length > 0) {
  console.error(
    `scripts/test.mjs: unknown option ${unknown.join(", ")} (known: --stress, --build, --check, --times=FILE)`,
  );
  process.exit(2);
}

const JOBS = Number(process.env.LATCH_TEST_JOBS ?? 2 * os.availableParallelism());
if (!Number.isInteger(JOBS) || JOBS < 1) {
  console.error(`scripts/test.mjs: LATCH_TEST_JOBS must be a whole number of at least 1, got ${JOBS}`);
  process.exit(2);
}

/**
 * Files that cannot share the machine, so they run alone after the rest, with the reason. No file
 * shares state with another: each keeps it in its own temp folders (fixtures, a state home per file:
 * test-each-file.mjs), listens on port 0, and tells its own processes and cgroups by a mark with its
 * pid (test/helpers/procs.ts, src/sandbox/cgroup.ts).
 */
const SERIAL = new Map([
  // CPU-bound work that must end within a product's time limit: alone, it has the cores a serial run
  // gave it. Side by side on a loaded machine (load 40-80) these failed.
  ["test/ast/outline.test.ts", "a 5,000-line outline must end within the default 5 s _ast_deadline"],
  ["test/ast/search.test.ts", "a 2,000-file search must end within the default 5 s _ast_deadline"],
  // A fork bomb takes every core until its 3 s timeout_ms: side by side it would eat the time limits
  // of the files beside it (and its own output's 5 s disclosure scan, which failed so under load).
  ["test/sandbox/cgroup-pool.test.ts", "runs a fork bomb (every core, up to 3 s)"],
  ["test/sandbox/processes.test.ts", "runs a fork bomb (every core, up to 3 s)"],
  // Ten contained process trees at once, each watched through /proc until all its processes stand:
  // side by side with the whole suite a tree twice did not stand within the call's 60 s (Node 20,
  // 2026-12-03), while it passed alone and in three other full runs.
  ["test/stress/process-tree.test.ts", "ten contained process trees at once, watched through /proc"],
]);

/**
 * The longest files, longest first (their wall time on 2 cores, from the per-file times this script
 * prints): they start first, so that none of them starts last and runs on alone.
 */
const LONG_FIRST = [
  "test/gateway/http.test.ts",
  "test/docs/blocks.test.ts",
  "test/cli/install.test.ts",
  "test/stress/shutdown.test.ts",
  "test/stress/state-faults.test.ts",
  "test/gateway/attach.test.ts",
  "test/stress/crash-steps.test.ts",
  "test/cli/log-runs.test.ts",
  "test/stress/sigkill-write.test.ts",
  "test/shell/background.test.ts",
  "test/cli/call.test.ts",
  "test/store/pg.test.ts",
  "test/stress/undo-exact.test.ts",
  "test/transports/approvals.test.ts",
  "test/stress/ledger-faults.test.ts",
  "test/fs/race.test.ts",
  "test/edit/stream-edit.test.ts",
  "test/gateway/pins.test.ts",
  "test/audit/decision-durable.test.ts",
  "test/tools/media.test.ts",
  "test/transports/http-concurrency.test.ts",
  "test/stress/concurrent-edits.test.ts",
  "test/stress/paths-property.test.ts",
  "test/transports/grep-runaway.test.ts",
  "test/stress/shell-exec.test.ts",
  "test/fs/odd-names.test.ts",
];

const all = readdirSync(path.join(REPO, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split(path.sep).join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();
// The stress run: test/stress/, and every other file with a loop whose count LATCH_STRESS sets (the
// race files through test/fs/race-fixture.ts, which times their races by it).
const loops = (f) => /LATCH_STRESS|helpers\/stress\.js|race-fixture\.js/.test(readFileSync(path.join(REPO, f), "utf8"));
let files = stressOnly ? all.filter((f) => f.startsWith("test/stress/") || loops(f)) : all;
if (filters.length > 0) files = files.filter((f) => filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`scripts/test.mjs: no test file matches ${filters.join(", ") || "test/**/*.test.ts"}`);
  process.exit(1);
}
const rank = (f) => (LONG_FIRST.includes(f) ? LONG_FIRST.indexOf(f) : LONG_FIRST.length);
const together = files.filter((f) => !SERIAL.has(f)).sort((a, b) => rank(a) - rank(b));
const alone = files.filter((f) => SERIAL.has(f));

// `--stress` runs the stress loops at their full counts (each test reads LATCH_STRESS=1); `npm test`
// runs them small, enough to catch the bugs they were written for.
// Every latch the tests start without --state-dir keeps its state in a temp folder, never in the
// user's own ~/.local/state/latch (a newer or older build there would meet a schema it cannot read).
const run = mkdtempSync(path.join(os.tmpdir(), "latch-test-run-"));
const times = path.join(run, "times.jsonl");
const env = {
  ...process.env,
  XDG_STATE_HOME: run,
  LATCH_TEST_STATE_HOME: run,
  LATCH_TEST_TIMES: times,
  ...(stressOnly ? { LATCH_STRESS: "1" } : {}),
};
delete env.LATCH_STATE_DIR;

// The test files' TypeScript loader (scripts/ts-loader.mjs); LATCH_TEST_LOADER=tsx runs them under
// tsx instead, to compare the two or to rule the loader out.
const LOADER = process.env.LATCH_TEST_LOADER === "tsx" ? "tsx" : "./scripts/ts-loader.mjs";

const started = performance.now();
let status = 0;

/**
 * `npm run check` (prettier, tsc, eslint, knip): about 80 s of CPU, nearly all of it on one core, and
 * none of it needs the build or the tests. Run before them, it left a core idle for a minute; beside
 * the build and the files side by side it fills the time those spend waiting. It ends before the files
 * that run alone start, so they keep the machine to themselves. Its output goes to a file and is
 * printed at the end, after the files' TAP.
 */
let checked;
let checker;
if (check) {
  const log = path.join(run, "check.log");
  const since = performance.now();
  const child = (checker = spawn("npm", ["run", "check", "--silent"], {
    cwd: REPO,
    stdio: ["ignore", openSync(log, "w"), openSync(log, "a")],
  }));
  checked = new Promise((resolve) => {
    child.on("error", (err) => resolve({ ok: false, out: `could not start npm run check: ${err.message}\n`, s: 0 }));
    child.on("close", (code, signal) =>
      resolve({
        ok: code === 0,
        out:
          readFileSync(log, "utf8") + (code === 0 ? "" : `npm run check ended with ${signal ?? `exit code ${code}`}\n`),
        s: (performance.now() - since) / 1000,
      }),
    );
  });
}
if (build) {
  const built = spawnSync("npm", ["run", "build", "--silent"], { cwd: REPO, stdio: "inherit" });
  if (built.status !== 0) {
    console.error(
      `scripts/test.mjs: npm run build failed (${built.error?.message ?? `exit code ${built.status}`}); no test ran`,
    );
    checker?.kill();
    process.exit(built.status || 1);
  }
}
const builtAt = performance.now();

let checkResult;
for (const [list, jobs] of [
  [together, JOBS],
  [alone, 1],
]) {
  if (list === alone && checked) checkResult = await checked;
  if (list.length === 0) continue;
  // Not spawnSync: the check's end must be seen (and timed) while the files run.
  const pass = spawn(
    process.execPath,
    ["--import", LOADER, "--import", "./scripts/test-each-file.mjs", "--test", `--test-concurrency=${jobs}`, ...list],
    { cwd: REPO, stdio: "inherit", env },
  );
  const code = await new Promise((resolve) => pass.on("close", (c) => resolve(c ?? 1)));
  if (code !== 0) status = code;
}
const wallS = (performance.now() - builtAt) / 1000;

// No times file: no test file ran to its end (each failed to load), and the TAP above says why.
const rows = existsSync(times)
  ? readFileSync(times, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l))
  : [];
rows.sort((a, b) => b.wallMs - a.wallMs);
const sum = (k) => rows.reduce((s, r) => s + r[k], 0) / 1000;
console.log(
  `# ${rows.length} files in ${wallS.toFixed(0)} s (${together.length} side by side, ${JOBS} at once; ${alone.length} alone)`,
);
console.log(
  `# per file, summed: wall ${sum("wallMs").toFixed(0)} s, CPU ${sum("cpuMs").toFixed(0)} s (with its processes)`,
);
for (const r of rows.slice(0, 15))
  console.log(
    `#   ${(r.wallMs / 1000).toFixed(1).padStart(6)} s wall ${(r.cpuMs / 1000).toFixed(1).padStart(6)} s CPU  ${r.file}`,
  );
if (checkResult) {
  process.stdout.write(checkResult.out);
  console.log(
    `# npm run check: ${checkResult.ok ? "ok" : "FAILED"} in ${checkResult.s.toFixed(0)} s, beside the files`,
  );
  if (!checkResult.ok && status === 0) status = 1;
}
if (build || check)
  console.log(`# in all ${((performance.now() - started) / 1000).toFixed(0)} s with the build and the check`);
if (keepTimes && existsSync(times)) copyFileSync(times, path.resolve(keepTimes));
rmSync(run, { recursive: true, force: true });
process.exit(status);
