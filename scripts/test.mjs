// The test runner's file list, found by folder: every test/**/*.test.ts, the suite first, then the
// stress files (test/stress/**). `--stress` runs the stress files alone; any other arguments are
// file filters (substrings of the path), for running a part while working on it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const stressOnly = args.includes("--stress");
const filters = args.filter((a) => a !== "--stress");

const all = readdirSync(path.join(REPO, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split(path.sep).join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();
const stress = all.filter((f) => f.startsWith("test/stress/"));
const suite = all.filter((f) => !f.startsWith("test/stress/"));
let files = stressOnly ? stress : [...suite, ...stress];
if (filters.length > 0) files = files.filter((f) => filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`scripts/test.mjs: no test file matches ${filters.join(", ") || "test/**/*.test.ts"}`);
  process.exit(1);
}

// `--stress` runs the stress loops at their full counts (each test reads LATCH_STRESS=1); `npm test`
// runs them small, enough to catch the bugs they were written for.
// Every latch the tests start without --state-dir keeps its state in a temp folder, never in the
// user's own ~/.local/state/latch (a newer or older build there would meet a schema it cannot read).
const stateHome = mkdtempSync(path.join(os.tmpdir(), "latch-test-state-"));
const env = { ...process.env, XDG_STATE_HOME: stateHome, ...(stressOnly ? { LATCH_STRESS: "1" } : {}) };
delete env.LATCH_STATE_DIR;
const run = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...files], {
  cwd: REPO,
  stdio: "inherit",
  env,
});
rmSync(stateHome, { recursive: true, force: true });
process.exit(run.status ?? 1);
