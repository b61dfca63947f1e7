// Every write's diff beside its result (issue 36): each write tool returns the unified diff of what it
// wrote as display data (hidden characters escaped, as an approval shows them), the policy log keeps
// it as evidence when evidence is on, and over MCP it travels in _meta while the model's text stays
// exactly what it was.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { lineId } from "../../src/edit/anchors.js";
import { MAX_DIFF_LINES } from "../../src/edit/diff.js";
import { readDiff } from "../../src/approval/visible.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";
import { CLI, runCli } from "../helpers/cli.js";
import { stdioClient, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());

test("each write tool's result carries the diff of what it wrote, and the log keeps it as evidence", async () => {
  fx.write({ "a.txt": "one\ntwo\nthree\n", "b.txt": "bee\n", "c.txt": "see\n", "h.txt": "x\ny\n", "s.txt": "cat\n" });
  const logFile = path.join(fx.base, "evidence.jsonl");
  const host = await fx.host({ policyEvidence: true, policyLog: logFile });
  for (const p of ["a.txt", "b.txt", "c.txt", "h.txt", "s.txt"]) expectOk(await host.call("read_file", { path: p }));
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "edit_file",
      { path: "a.txt", old_string: "two", new_string: "TWO" },
      "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
    ],
    ["write_file", { path: "new.txt", content: "hi\n" }, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+hi\n"],
    [
      "sed",
      { path: "s.txt", pattern: "cat", replacement: "dog" },
      "--- a/s.txt\n+++ b/s.txt\n@@ -1,1 +1,1 @@\n-cat\n+dog\n",
    ],
    [
      "hash_edit",
      { path: "h.txt", edits: [{ op: "replace", pos: `2#${lineId("y")}`, lines: ["Y"] }] },
      "--- a/h.txt\n+++ b/h.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n",
    ],
    [
      "apply_patch",
      { patch: "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n" },
      "--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-bee\n+BEE\n",
    ],
    ["move_file", { from: "c.txt", to: "d/c.txt" }, "--- a/c.txt\n+++ b/d/c.txt\n"],
    ["delete_file", { path: "new.txt" }, "--- a/new.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-hi\n"],
  ];
  for (const [tool, args, diff] of cases) {
    const out = expectOk(await host.call(tool, args));
    assert.deepEqual(out.display, { diff, diff_complete: true }, tool);
    assert.ok(!JSON.stringify(out.result).includes("@@"), `${tool}: the diff is not in the model's result`);
  }
  host.close();
  const outcomes = readFileSync(logFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome" && r.display);
  assert.deepEqual(
    outcomes.map((r) => r.display.diff),
    cases.map((c) => c[2]),
  );
});

test("a diff's hidden characters are escaped as an approval shows them, and read back exactly", async () => {
  fx.write({ "esc.txt": "line\n" });
  const host = await fx.host();
  expectOk(await host.call("read_file", { path: "esc.txt" }));
  const out = expectOk(
    await host.call("edit_file", { path: "esc.txt", old_string: "line", new_string: "\x1b[2Kok\r" }),
  );
  const shown = out.display!.diff as string;
  assert.ok(!shown.includes("\x1b") && !/\r(?!\n)/.test(shown.replace(/\r\n/g, "")), JSON.stringify(shown));
  assert.equal(out.display!.diff_escaped, true);
  assert.equal(readDiff(shown), "--- a/esc.txt\n+++ b/esc.txt\n@@ -1,1 +1,1 @@\n-line\n+\x1b[2Kok\r\n");
});

test("a write's diff has the approval diff's bounds: cut at MAX_DIFF_LINES, and said so", async () => {
  const host = await fx.host();
  const content = Array.from({ length: 400 }, (_, i) => `l${i}\n`).join("");
  const out = expectOk(await host.call("write_file", { path: "big.txt", content }));
  const lines = (out.display!.diff as string).split("\n");
  assert.equal(lines.length, MAX_DIFF_LINES + 2, "the cut lines, the marker, and the final newline");
  assert.equal(out.display!.diff_complete, false);
  assert.match(out.display!.diff_note as string, /only the first 120 are shown/);
});

test("over MCP (auto_edit): the diff is in _meta, and the model's text is exactly what it was before", async () => {
  fx.write({ "m.txt": "alpha\nbeta\ngamma\n" });
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--envelope", "auto_edit"]);
  try {
    await client.callTool({ name: "read_file", arguments: { path: "m.txt" } });
    const r = (await client.callTool({
      name: "edit_file",
      arguments: { path: "m.txt", old_string: "beta", new_string: "BETA" },
    })) as ToolResult & { _meta?: Record<string, unknown> };
    assert.equal(r.isError, undefined);
    const diff = "--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n";
    assert.deepEqual(r._meta, { "latch/display": { diff, diff_complete: true } });
    // Pinned: the model's text as latch sent it before write results carried a diff, and the call id undo takes.
    const id = /"call_id":"(c[0-9a-z]+)"/.exec((r.content as { text: string }[])[0].text)?.[1];
    assert.ok(id, "the result names its call id");
    assert.deepEqual(r.content, [
      {
        type: "text",
        text: `{"path":"m.txt","written":true,"old_bytes":17,"new_bytes":17,"old_sha256":"4fdbc441ea7b546100e086ac1e4fc5ae6749b7314311c99db05be450eca12996","new_sha256":"b0d5fcac7492427d0767380786c6d7843c342299a8a447ac2ccc8deaa78ca153","replacements":1,"call_id":"${id}"}`,
      },
    ]);
    assert.equal(readFileSync(path.join(fx.root, "m.txt"), "utf8"), "alpha\nBETA\ngamma\n");
  } finally {
    await client.close();
  }
});

test("latch call: stdout stays one JSON object; on a terminal the diff follows on stderr", async () => {
  fx.write({ "t.txt": "red\n" });
  const base = ["--root", fx.root, "--state-dir", fx.state, "--session", "term"];
  assert.equal((await runCli(["call", "read_file", '{"path":"t.txt"}', ...base])).code, 0);
  const piped = await runCli(["call", "edit_file", '{"path":"t.txt","old_string":"red","new_string":"blue"}', ...base]);
  assert.equal(piped.code, 0, piped.stdout + piped.stderr);
  assert.equal(piped.stderr, "", "no terminal: nothing but the JSON");
  assert.equal(piped.json.display.diff, "--- a/t.txt\n+++ b/t.txt\n@@ -1,1 +1,1 @@\n-red\n+blue\n");
  // script(1) gives the command a terminal; stdout goes to a file, so what script prints is stderr.
  const out = path.join(fx.base, "term.json");
  const sh = path.join(fx.base, "term.sh");
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = [
    process.execPath,
    CLI,
    "call",
    "edit_file",
    '{"path":"t.txt","old_string":"blue","new_string":"green"}',
    ...base,
  ];
  writeFileSync(sh, `${cmd.map(q).join(" ")} > ${q(out)}\n`);
  const tty = execFileSync("script", ["-qec", `sh ${q(sh)}`, "/dev/null"], { encoding: "utf8" });
  assert.equal(JSON.parse(readFileSync(out, "utf8")).status, "ok");
  assert.equal(tty.replace(/\r\n/g, "\n"), "--- a/t.txt\n+++ b/t.txt\n@@ -1,1 +1,1 @@\n-blue\n+green\n");
});
