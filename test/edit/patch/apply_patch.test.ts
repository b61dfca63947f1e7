// apply_patch: unified diffs, all-or-nothing, looser matches reported, and hostile patches (paths
// outside the root, into .git or the control plane, 10,000 chunks, a failure on the last file).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { Host } from "../../../src/host/create-host.js";
import { makeFixture } from "../../helpers/fixture.js";
import { callsOf } from "./log.js";

const fx = makeFixture();
after(() => fx.cleanup());
const LOG = path.join(fx.base, "policy.jsonl");
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host({ policyLog: LOG }));
const read = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");

async function readAll(...rels: string[]): Promise<void> {
  for (const rel of rels) assert.equal((await (await host()).call("read_file", { path: rel })).status, "ok", rel);
}

async function patch(p: string, extra: Record<string, unknown> = {}): Promise<any> {
  return (await host()).call("apply_patch", { patch: p, ...extra });
}

/** Every file under the workspace with its content, to show that nothing changed. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(fx.root, { recursive: true, encoding: "utf8" }).sort()) {
    const abs = path.join(fx.root, rel);
    try {
      out[rel] = readFileSync(abs, "utf8");
    } catch {
      out[rel] = "<dir>";
    }
  }
  return out;
}

describe("apply_patch: unified diffs", () => {
  test("a git diff over two files, with a rename and a new file, applies", async () => {
    fx.write({ "u/a.txt": "one\ntwo\nthree\nfour\n", "u/b.txt": "alpha\nbeta\n" });
    await readAll("u/a.txt", "u/b.txt");
    const diff = [
      "diff --git a/u/a.txt b/u/a.txt",
      "index 1111111..2222222 100644",
      "--- a/u/a.txt",
      "+++ b/u/a.txt",
      "@@ -1,4 +1,4 @@",
      " one",
      "-two",
      "+TWO",
      " three",
      " four",
      "diff --git a/u/b.txt b/u/c.txt",
      "similarity index 50%",
      "rename from u/b.txt",
      "rename to u/c.txt",
      "--- a/u/b.txt",
      "+++ b/u/c.txt",
      "@@ -1,2 +1,2 @@",
      " alpha",
      "-beta",
      "+gamma",
      "\\ No newline at end of file",
      "diff --git a/u/new.txt b/u/new.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/u/new.txt",
      "@@ -0,0 +1,2 @@",
      "+fresh",
      "+file",
      "",
    ].join("\n");
    const r = await patch(diff);
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.format, "unified");
    assert.equal(read("u/a.txt"), "one\nTWO\nthree\nfour\n");
    assert.equal(read("u/c.txt"), "alpha\ngamma");
    assert.equal(existsSync(path.join(fx.root, "u/b.txt")), false);
    assert.equal(read("u/new.txt"), "fresh\nfile\n");
  });

  test("hunk line numbers that are off still apply by context; CRLF files stay CRLF", async () => {
    fx.write({ "crlf.txt": "a\r\nb\r\nc\r\nd\r\n" });
    await readAll("crlf.txt");
    const r = await patch("--- a/crlf.txt\n+++ b/crlf.txt\n@@ -7,2 +7,2 @@\n c\n-d\n+D\n");
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("crlf.txt"), "a\r\nb\r\nc\r\nD\r\n");
  });
});

describe("apply_patch: matching", () => {
  test("a chunk matched only by ignoring trailing whitespace is applied and reported", async () => {
    fx.write({ "ws.txt": "keep  \nold line   \nend\n" });
    await readAll("ws.txt");
    const r = await patch("*** Begin Patch\n*** Update File: ws.txt\n@@\n keep\n-old line\n+new line\n*** End Patch");
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("ws.txt"), "keep  \nnew line\nend\n");
    assert.deepEqual(r.result.files[0].loose, [{ chunk: 1, line: 1, how: "trailing whitespace" }]);
    assert.match(r.result.note, /loosely/);
  });

  test("an exact match is preferred to an earlier loose one, and is not reported", async () => {
    fx.write({ "pref.txt": "x \nx\n" });
    await readAll("pref.txt");
    const r = await patch("*** Begin Patch\n*** Update File: pref.txt\n@@\n-x\n+y\n*** End Patch");
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("pref.txt"), "x \ny\n");
    assert.equal(r.result.files[0].loose, undefined);
  });

  test("`@@ anchor` places the chunk after the anchor line", async () => {
    fx.write({ "anch.py": "def a():\n    return 1\ndef b():\n    return 1\n" });
    await readAll("anch.py");
    const r = await patch(
      "*** Begin Patch\n*** Update File: anch.py\n@@ def b():\n-    return 1\n+    return 2\n*** End Patch",
    );
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("anch.py"), "def a():\n    return 1\ndef b():\n    return 2\n");
  });
});

describe("apply_patch: read before write", () => {
  test("updating a file not read in this session is refused, and nothing is written", async () => {
    fx.write({ "unread.txt": "a\n", "other-new.txt.keep": "k\n" });
    const r = await patch(
      "*** Begin Patch\n*** Add File: created-first.txt\n+x\n*** Update File: unread.txt\n@@\n-a\n+b\n*** End Patch",
    );
    assert.equal(r.status, "refused");
    assert.match(r.reason, /have not read it/);
    assert.equal(read("unread.txt"), "a\n");
    assert.equal(existsSync(path.join(fx.root, "created-first.txt")), false);
  });

  test("a file changed on disk since the read refuses the whole patch", async () => {
    fx.write({ "stale/a.txt": "a\n", "stale/b.txt": "b\n" });
    await readAll("stale/a.txt", "stale/b.txt");
    writeFileSync(path.join(fx.root, "stale/b.txt"), "b changed\n");
    const r = await patch(
      "*** Begin Patch\n*** Update File: stale/a.txt\n@@\n-a\n+A\n*** Update File: stale/b.txt\n@@\n-b changed\n+B\n*** End Patch",
    );
    assert.equal(r.status, "refused");
    assert.match(r.reason, /changed since you read it/);
    assert.equal(read("stale/a.txt"), "a\n");
    assert.equal(read("stale/b.txt"), "b changed\n");
  });

  test("the read marker moves with a moved file: a second patch can update it at its new path", async () => {
    fx.write({ "mv/src.txt": "1\n2\n" });
    await readAll("mv/src.txt");
    let r = await patch(
      "*** Begin Patch\n*** Update File: mv/src.txt\n*** Move to: mv/dst.txt\n@@\n-1\n+one\n*** End Patch",
    );
    assert.equal(r.status, "ok", JSON.stringify(r));
    r = await patch("*** Begin Patch\n*** Update File: mv/dst.txt\n@@\n-2\n+two\n*** End Patch");
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("mv/dst.txt"), "one\ntwo\n");
  });
});

describe("apply_patch: hostile patches", () => {
  test("paths outside the root (relative and absolute) are refused; nothing is written outside", async () => {
    const before = snapshot();
    for (const p of ["../escape.txt", path.join(fx.base, "abs-escape.txt"), "a/../../escape2.txt"]) {
      const r = await patch(`*** Begin Patch\n*** Add File: ${p}\n+pwned\n*** End Patch`);
      assert.equal(r.status, "refused", p);
      assert.match(r.reason, /outside the workspace/);
    }
    const r = await patch("--- /dev/null\n+++ b/../escape3.txt\n@@ -0,0 +1 @@\n+pwned\n");
    assert.equal(r.status, "refused");
    for (const f of ["escape.txt", "abs-escape.txt", "escape2.txt", "escape3.txt"])
      assert.equal(existsSync(path.join(fx.base, f)), false, f);
    assert.deepEqual(snapshot(), before);
    assert.ok(callsOf(LOG, "apply_patch").some((c) => c.final === "deny"));
  });

  test("a move to a path outside the root is refused before the source is touched", async () => {
    fx.write({ "stay.txt": "s\n" });
    await readAll("stay.txt");
    const r = await patch(
      "*** Begin Patch\n*** Update File: stay.txt\n*** Move to: ../gone.txt\n@@\n-s\n+t\n*** End Patch",
    );
    assert.equal(r.status, "refused");
    assert.equal(read("stay.txt"), "s\n");
    assert.equal(existsSync(path.join(fx.base, "gone.txt")), false);
  });

  test("writing into .git (hooks) is refused", async () => {
    mkdirSync(path.join(fx.root, ".git/hooks"), { recursive: true });
    const r = await patch(
      "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+curl evil\n*** End Patch",
    );
    assert.equal(r.status, "refused");
    assert.match(r.reason, /\.git/);
    assert.equal(existsSync(path.join(fx.root, ".git/hooks/pre-commit")), false);
    const r2 = await patch("--- /dev/null\n+++ b/sub/.git/config\n@@ -0,0 +1 @@\n+[core]\n");
    assert.equal(r2.status, "refused");
    assert.equal(existsSync(path.join(fx.root, "sub/.git/config")), false);
  });

  test("the control plane (state dir, policy log) is refused", async () => {
    const logBefore = readFileSync(LOG, "utf8").length;
    for (const p of [path.join(fx.state, "latch.db"), LOG]) {
      const r = await patch(`*** Begin Patch\n*** Delete File: ${p}\n*** End Patch`);
      assert.equal(r.status, "refused", p);
    }
    assert.ok(existsSync(path.join(fx.state, "latch.db")));
    assert.ok(readFileSync(LOG, "utf8").length > logBefore); // still appended to, not replaced
  });

  test("a patch failing on its last file writes nothing (adds, deletes, moves and updates before it)", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`many/f${i}.txt`] = `file ${i}\nline\n`;
    fx.write(files);
    await readAll(...Object.keys(files));
    const before = snapshot();
    const parts = ["*** Begin Patch", "*** Add File: many/new/deep/added.txt", "+new"];
    parts.push("*** Delete File: many/f0.txt");
    parts.push("*** Update File: many/f1.txt", "*** Move to: many/moved/f1.txt", "@@", "-file 1", "+FILE 1");
    for (let i = 2; i < 19; i++) parts.push(`*** Update File: many/f${i}.txt`, "@@", `-file ${i}`, `+FILE ${i}`);
    parts.push("*** Update File: many/f19.txt", "@@", "-not in the file", "+x", "*** End Patch");
    const r = await patch(parts.join("\n"));
    assert.equal(r.status, "error");
    assert.equal(r.code, "ENOMATCH");
    assert.match(r.message, /many\/f19\.txt/);
    assert.deepEqual(snapshot(), before);
    assert.equal(existsSync(path.join(fx.root, "many/new")), false);
    const calls = callsOf(LOG, "apply_patch");
    assert.deepEqual(calls.at(-1), { final: "allow", status: "error" });
  });

  test("a patch of 10,000 chunks over a 30,000-line file applies, in order, in bounded time", async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i}`);
    fx.write({ "big.txt": lines.join("\n") + "\n" });
    await readAll("big.txt");
    const parts = ["*** Begin Patch", "*** Update File: big.txt"];
    for (let k = 0; k < 10_000; k++) parts.push("@@", ` line ${3 * k}`, `-line ${3 * k + 1}`, `+LINE ${3 * k + 1}`);
    parts.push("*** End Patch");
    const started = Date.now();
    const r = await patch(parts.join("\n"));
    assert.equal(r.status, "ok", JSON.stringify(r).slice(0, 500));
    assert.ok(Date.now() - started < 60_000, "does not hang");
    const out = read("big.txt").split("\n");
    assert.equal(out[1], "LINE 1");
    assert.equal(out[29_998], "LINE 29998");
    assert.equal(out[29_999], "line 29999");
    assert.equal(out.filter((l) => l.startsWith("LINE")).length, 10_000);
  });

  test("a patch naming one file twice is refused", async () => {
    fx.write({ "twice.txt": "a\n" });
    await readAll("twice.txt");
    const r = await patch(
      "*** Begin Patch\n*** Update File: twice.txt\n@@\n-a\n+b\n*** Delete File: ./twice.txt\n*** End Patch",
    );
    assert.equal(r.status, "refused");
    assert.equal(read("twice.txt"), "a\n");
  });

  test("a binary file is not updated by a text patch", async () => {
    writeFileSync(path.join(fx.root, "bin.dat"), Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]));
    await (await host()).call("read_file", { path: "bin.dat" });
    const r = await patch("*** Begin Patch\n*** Update File: bin.dat\n@@\n-A\n+B\n*** End Patch");
    assert.notEqual(r.status, "ok");
    assert.deepEqual([...readFileSync(path.join(fx.root, "bin.dat"))], [0xff, 0xfe, 0x00, 0x41, 0x0a]);
  });
});

describe("apply_patch: dry run", () => {
  test("returns the diff of every file, writes nothing, records no read", async () => {
    fx.write({ "dry/a.txt": "a\n", "dry/b.txt": "b\n" });
    await readAll("dry/a.txt", "dry/b.txt");
    const before = snapshot();
    const p =
      "*** Begin Patch\n*** Update File: dry/a.txt\n@@\n-a\n+A\n*** Delete File: dry/b.txt\n*** Add File: dry/c.txt\n+c\n*** End Patch";
    const r = await patch(p, { dry_run: true });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.written, false);
    assert.deepEqual(
      r.result.files.map((f: any) => `${f.action} ${f.path}`),
      ["update dry/a.txt", "delete dry/b.txt", "add dry/c.txt"],
    );
    assert.match(r.result.diff, /-a\n\+A/);
    assert.match(r.result.diff, /\+\+\+ \/dev\/null/);
    assert.deepEqual(snapshot(), before);
    // The session's markers did not move: the real patch still applies.
    assert.equal((await patch(p)).status, "ok");
  });

  test("a dry run of a patch over an unread file is refused as the real call would be", async () => {
    fx.write({ "dry/unread.txt": "u\n" });
    const r = await patch("*** Begin Patch\n*** Update File: dry/unread.txt\n@@\n-u\n+U\n*** End Patch", {
      dry_run: true,
    });
    assert.equal(r.status, "refused");
  });
});
