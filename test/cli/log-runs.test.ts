// Logs that verify as a set and do not pile up (issue 36): many `latch call`s through the built CLI,
// then the README's own `latch log verify …/*.jsonl` line; a tampered record named by file and line;
// retention ([log] max_files) that leaves its removed runs' heads for verify to report; a log with no
// head kept fails unless --no-head; `latch log list` and `latch log show`.
// LATCH_STRESS=1 runs 300 calls per case; `npm test` 12, four at a time: past the 10 logs retention
// keeps, with runs that start in the same instant (each must get a log of its own).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync, copyFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli, type CliRun } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { latchBin } from "../docs/blocks.js";
import { stdioClient } from "../helpers/mcp.js";
import { stressCount } from "../helpers/stress.js";

const RUNS = stressCount(12, 300);
const CONCURRENCY = 4;

const fx = makeFixture("latch-logruns-");
after(() => fx.cleanup());
fx.write({ "a.txt": "alpha\n" });

/** An environment whose default state dir is under `home` (no LATCH_STATE_DIR or XDG_STATE_HOME). */
function homeEnv(home: string): NodeJS.ProcessEnv {
  // Undefined, not deleted: runCli lays this over process.env, where the runner sets XDG_STATE_HOME.
  return { ...process.env, HOME: home, LATCH_STATE_DIR: undefined, XDG_STATE_HOME: undefined, LATCH_CONFIG: undefined };
}

/** `n` runs of `latch call read_file`, `CONCURRENCY` at a time; every one must succeed. */
async function manyCalls(n: number, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const r = await runCli(["call", "read_file", '{"path":"a.txt"}', "--root", fx.root, ...args], { env });
      assert.equal(r.code, 0, r.stdout + r.stderr);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** The README's verify line, run by a shell (which expands its glob) with `latch` on the PATH. */
function readmeVerify(home: string): CliRun {
  const readme = readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");
  const line = readme.split("\n").find((l) => l.startsWith("latch log verify "));
  assert.ok(line, "the README has a `latch log verify` line");
  const env = { ...homeEnv(home), PATH: `${latchBin(fx.base)}:${process.env.PATH ?? ""}` };
  try {
    const stdout = execFileSync("sh", ["-c", line], { env, encoding: "utf8", stdio: "pipe" });
    return { code: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

test(`${RUNS} latch calls, then the README's verify line passes; one tampered record fails it, named`, async () => {
  const home = path.join(fx.base, "home-a");
  mkdirSync(home);
  const env = homeEnv(home);
  await manyCalls(RUNS, [], env);
  const logs = path.join(home, ".local", "state", "latch", "logs");
  const names = readdirSync(logs).sort();
  assert.equal(names.length, RUNS, "one log per run, without retention");

  const good = readmeVerify(home);
  assert.equal(good.code, 0, good.stdout + good.stderr);
  const lines = good.stdout.trimEnd().split("\n");
  assert.equal(lines.length, RUNS + 1, "one line per run, and the summary");
  for (const l of lines.slice(0, -1)) assert.match(l, /: ok: 4 records, \S+Z \.\. \S+Z, head kept$/);
  assert.equal(lines.at(-1), `${RUNS} runs: ${RUNS} ok, 0 failed; 0 pruned by retention (heads kept)`);

  // Change one decision's reason in one file among many: its record hash no longer matches.
  const victim = path.join(logs, names[Math.floor(RUNS / 2)]);
  const text = readFileSync(victim, "utf8").split("\n");
  assert.match(text[1], /"type":"effect_decision"/);
  text[1] = text[1].replace(/"reason":"[^"]*"/, '"reason":"nothing to see"');
  writeFileSync(victim, text.join("\n"));
  const bad = readmeVerify(home);
  assert.equal(bad.code, 1, bad.stdout);
  const faults = bad.stdout.split("\n").filter((l) => l !== "" && !/: ok: /.test(l));
  assert.equal(faults.length, 2, bad.stdout);
  assert.match(faults[0], new RegExp(`^${victim}:2: record_sha256 does not match the line's content`));
  assert.equal(faults[1], `${RUNS} runs: ${RUNS - 1} ok, 1 failed; 0 pruned by retention (heads kept)`);
});

test(`retention: max_files = 10 over ${RUNS} runs leaves 10 logs, and verify reports the pruned runs by head`, async () => {
  const state = path.join(fx.base, "state-b");
  const config = path.join(fx.base, "retention.toml");
  writeFileSync(config, "[log]\nmax_files = 10\n");
  await manyCalls(RUNS, ["--state-dir", state, "--config", config], process.env);
  const logs = path.join(state, "logs");
  const left = readdirSync(logs);
  assert.equal(left.length, 10, left.join(", "));

  const v = await runCli(["log", "verify", "--state-dir", state, "--json"]);
  assert.equal(v.code, 0, v.stdout);
  assert.equal(v.json.runs.length, 10);
  for (const r of v.json.runs) assert.equal(r.head, "matches", JSON.stringify(r));
  const [gone] = v.json.gone;
  assert.equal(gone.pruned.length, RUNS - 10, "every run is either here or pruned with its head kept");
  assert.equal(gone.missing.length, 0);
  for (const h of gone.pruned) {
    assert.ok(!left.includes(path.basename(h.file)));
    assert.match(h.head, /^[0-9a-f]{64}$/);
    assert.equal(h.lines, 4);
  }
  const text = await runCli(["log", "verify", "--state-dir", state]);
  assert.match(text.stdout, new RegExp(`: ${RUNS - 10} runs pruned by retention, heads kept:\n`));
  assert.match(
    text.stdout,
    new RegExp(`\n10 runs: 10 ok, 0 failed; ${RUNS - 10} pruned by retention \\(heads kept\\)\n$`),
  );

  // A log removed by hand is not a pruned one: verify fails and names it.
  const removed = path.join(logs, left.sort()[0]);
  unlinkSync(removed);
  const after = await runCli(["log", "verify", "--state-dir", state]);
  assert.equal(after.code, 1, after.stdout);
  assert.match(after.stdout, new RegExp(`${removed}: the file is gone, and not by retention`));
});

test("retention never removes a log another latch is still writing", async () => {
  const state = path.join(fx.base, "state-c");
  const client = await stdioClient(["--root", fx.root, "--state-dir", state]);
  try {
    await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
    const [live] = readdirSync(path.join(state, "logs"));
    const config = path.join(fx.base, "one.toml");
    writeFileSync(config, "[log]\nmax_files = 1\n");
    for (let i = 0; i < 3; i++) await manyCalls(1, ["--state-dir", state, "--config", config], process.env);
    const left = readdirSync(path.join(state, "logs"));
    assert.ok(left.includes(live), `the server's open log stayed: ${left.join(", ")}`);
    assert.equal(left.length, 2, "the live log and the last run's");
  } finally {
    await client.close();
  }
});

test("a log with no head kept fails verify unless --no-head; it says why", async () => {
  const state = path.join(fx.base, "state-d");
  assert.equal(
    (await runCli(["call", "read_file", '{"path":"a.txt"}', "--root", fx.root, "--state-dir", state])).code,
    0,
  );
  const [name] = readdirSync(path.join(state, "logs"));
  const copy = path.join(fx.base, "elsewhere", name);
  mkdirSync(path.dirname(copy));
  copyFileSync(path.join(state, "logs", name), copy);
  const strict = await runCli(["log", "verify", "--state-dir", state, copy]);
  assert.equal(strict.code, 1, strict.stdout);
  assert.match(strict.stdout, /no head is kept for it in the state database .*--no-head/);
  const loose = await runCli(["log", "verify", "--state-dir", state, "--no-head", copy]);
  assert.equal(loose.code, 0, loose.stdout);
  assert.match(loose.stdout, /: ok: 4 records, .*, no head kept\n/);
  const noDb = await runCli(["log", "verify", "--state-dir", path.join(fx.base, "no-state"), copy]);
  assert.equal(noDb.code, 1);
  assert.match(noDb.stdout, /no state database at /);
  const emptyDir = path.join(fx.base, "empty-logs");
  mkdirSync(emptyDir);
  const empty = await runCli(["log", "verify", "--state-dir", state, emptyDir]);
  assert.equal(empty.code, 1, "nothing verified is not a pass");
  assert.match(empty.stdout, /no policy log found in .*empty-logs\n0 runs: 0 ok, 0 failed/);
});

test("latch log list and latch log show: runs with span, session, calls, size, status; decisions as a table", async () => {
  const state = path.join(fx.base, "state-e");
  const base = ["--root", fx.root, "--state-dir", state, "--session", "s-42"];
  assert.equal((await runCli(["call", "read_file", '{"path":"a.txt"}', ...base, "--policy-evidence"])).code, 0);
  assert.equal((await runCli(["call", "local_shell", '{"command":"git push"}', ...base])).code, 3);
  const list = await runCli(["log", "list", "--state-dir", state, "--json"]);
  assert.equal(list.json.length, 2);
  for (const r of list.json) {
    assert.deepEqual([r.ok, r.finished, r.head, r.effects, r.sessions], [true, true, "matches", 1, ["s-42"]]);
    assert.ok(r.bytes > 0 && r.first_at <= r.last_at);
  }
  const text = await runCli(["log", "list", "--state-dir", state]);
  assert.match(text.stdout, /\.jsonl {2}\S+Z \.\. \S+Z {2}session s-42 {2}1 calls {2}\d+ B {2}ok, head kept\n/);

  const [first, second] = list.json.map((r: { file: string }) => path.basename(r.file));
  const shown = await runCli(["log", "show", "--state-dir", state, first]);
  assert.equal(shown.code, 0, shown.stderr);
  const rows = shown.stdout.split("\n");
  assert.match(rows[1], /^time +tool +decision +reason +path or command$/);
  assert.match(rows[2], /^\d\d:\d\d:\d\d\.\d{3} +read_file +allow → ok +envelope \S+: files\.read = allow .* a\.txt$/);
  const json = await runCli(["log", "show", "--state-dir", state, second, "--json"]);
  assert.equal(json.json.length, 1);
  assert.equal(json.json[0].tool, "local_shell");
  assert.equal(json.json[0].decision, "deny");
  assert.equal(json.json[0].target, undefined, "without evidence the command is not in the log");
  const none = await runCli(["log", "show", "--state-dir", state, "no-such-run"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /No run log `no-such-run`.*latch log list/);
});

test("[log] settings are checked at start: a bad value names file, line and key", async () => {
  for (const [toml, want] of [
    ["[log]\nmax_files = 0\n", /bad\.toml:2: `log\.max_files`: expected a whole number of files, at least 1/],
    ['[log]\n\nretention_days = "30d"\n', /bad\.toml:3: `log\.retention_days`: expected a whole number of days/],
    ["[log]\nkeep = 3\n", /bad\.toml:2: unknown key `log\.keep`; accepted in \[log\]: retention_days, max_files/],
  ] as const) {
    const config = path.join(fx.base, "bad.toml");
    writeFileSync(config, toml);
    const r = await runCli([
      "call",
      "read_file",
      '{"path":"a.txt"}',
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--config",
      config,
    ]);
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.json.code, "ECONFIG");
    assert.match(r.json.message, want);
  }
});
