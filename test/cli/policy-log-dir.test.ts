// `--policy-log DIR` in a client config: every spawn of the same config (stdio, or `--http`) connects
// and gets its own file (time and pid in its name); `--log-retention` prunes older runs; `latch log
// list` shows them; the folder's other logs are control plane.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, utimesSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { connectOver, modelView, TRANSPORTS, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());

for (const transport of TRANSPORTS)
  test(`${transport}: the same config started twice: two runs, two files, both listed and verified`, async () => {
    const dir = path.join(fx.base, `logs-a-${transport}`);
    mkdirSync(dir);
    fx.write({ "x.txt": "x\n" });
    const args = ["--root", fx.root, "--state-dir", fx.state, "--policy-log", dir];
    for (let i = 0; i < 2; i++) {
      const { client, close } = await connectOver(transport, args);
      const r = (await client.callTool({ name: "read_file", arguments: { path: "x.txt" } })) as ToolResult;
      assert.equal(r.isError, undefined, modelView(r));
      await close();
    }
    const names = readdirSync(dir);
    assert.equal(names.length, 2, names.join(", "));
    for (const n of names) assert.match(n, /^policy-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d+Z-\d+-[0-9a-f]+\.jsonl$/);
    const listed = () => runCli(["log", "list", dir, "--state-dir", fx.state, "--json"]);
    let list = await listed();
    for (let i = 0; i < 50 && !list.json?.every((l: { finished: boolean }) => l.finished); i++) {
      await new Promise((r) => setTimeout(r, 100)); // each server finishes its log as it exits
      list = await listed();
    }
    assert.equal(list.json.length, 2);
    for (const l of list.json) {
      assert.equal(l.finished, true, JSON.stringify(l));
      assert.equal(l.effects, 1);
      const v = await runCli(["log", "verify", "--state-dir", fx.state, l.file]);
      assert.equal(v.code, 0, v.stdout);
    }
    const both = await runCli(["log", "verify", "--state-dir", fx.state, dir]);
    assert.equal(both.code, 0, both.stdout);
    assert.match(both.stdout, /\n2 runs: 2 ok, 0 failed; 0 pruned by retention \(heads kept\)\n$/);
    const text = await runCli(["log", "list", dir, "--state-dir", fx.state]);
    assert.match(text.stdout, / {2}1 calls {2}\d+ B {2}ok, head kept\n/);
  });

test("a path ending in / is a folder too, created if missing", async () => {
  const dir = path.join(fx.base, "logs-new") + "/";
  const r = await runCli([
    "call",
    "read_file",
    '{"path":"x.txt"}',
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--policy-log",
    dir,
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(readdirSync(dir).length, 1);
});

test("--log-retention prunes older run logs by age or by size, and nothing else in the folder", async () => {
  const dir = path.join(fx.base, "logs-b");
  mkdirSync(dir);
  const old = path.join(dir, "policy-2020-01-01T00-00-00-000Z-1-abcdef.jsonl");
  const recent = path.join(dir, "policy-2026-01-01T00-00-00-000Z-2-abcdef.jsonl");
  const other = path.join(dir, "notes.txt");
  // Finished runs (a run_finished last): retention keeps an unfinished log whose pid is alive.
  const finished = '{"type":"run_started","at":"x"}\n'.repeat(100) + '{"record":{"type":"run_finished"}}\n';
  for (const f of [old, recent, other]) writeFileSync(f, finished);
  const tenDaysAgo = (Date.now() - 10 * 86_400_000) / 1000;
  utimesSync(old, tenDaysAgo, tenDaysAgo);
  utimesSync(other, tenDaysAgo, tenDaysAgo);
  const base = ["call", "read_file", '{"path":"x.txt"}', "--root", fx.root, "--state-dir", fx.state];
  let r = await runCli([...base, "--policy-log", dir, "--log-retention", "7d"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(existsSync(old), false, "a run log older than 7 days went");
  assert.ok(existsSync(recent) && existsSync(other));
  r = await runCli([...base, "--policy-log", dir, "--log-retention", "1b"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const left = readdirSync(dir).sort();
  assert.equal(left.length, 2, left.join(", "));
  assert.ok(left.includes("notes.txt"));
  assert.equal(existsSync(recent), false, "by size, the oldest went first; this run's own log stayed");
  const bad = await runCli([...base, "--policy-log", dir, "--log-retention", "forever"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stdout + bad.stderr, /--log-retention.*30d.*50MB/);
});

test("another run's log in a --policy-log folder inside the workspace is refused to the tools", async () => {
  const dir = path.join(fx.root, "audit");
  mkdirSync(dir);
  writeFileSync(path.join(dir, "policy-2026-01-01T00-00-00-000Z-9-abcdef.jsonl"), "{}\n");
  const r = await runCli([
    "call",
    "read_file",
    '{"path":"audit/policy-2026-01-01T00-00-00-000Z-9-abcdef.jsonl"}',
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--policy-log",
    dir,
  ]);
  assert.equal(r.json?.status, "refused", r.stdout);
});
