import { LOCAL_FILES } from "../../../src/fs/backend.js";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { applyPatch } from "diff";
import { buildDiff } from "../../../src/edit/diff.js";
import type { ToolEnv } from "../../../src/tools/define.js";
import hashEdit from "../../../src/tools/hash_edit.js";
import { anchoredLine, lineId } from "../../../src/edit/anchors.js";
import { resolvePath } from "../../../src/fs/paths.js";
import { makeFixture } from "../../helpers/fixture.js";
import { anchorsOf, call, ok, readAnchors } from "./util.js";
import { expectRefused } from "../../helpers/expect.js";

const fx = makeFixture("latch-anchors-");
after(() => fx.cleanup());
const disk = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");
const snapshot = (rel: string) => {
  const st = statSync(path.join(fx.root, rel));
  return { bytes: readFileSync(path.join(fx.root, rel)), mtime: st.mtimeMs, ino: st.ino };
};
/** Another process changes the file, as an editor or a formatter would. */
const otherProcessWrites = (rel: string, content: string) =>
  execFileSync(process.execPath, [
    "-e",
    "require('fs').writeFileSync(process.argv[1], process.argv[2])",
    path.join(fx.root, rel),
    content,
  ]);

describe("anchored reads", () => {
  test("read_file and read_file_range show N#ID|text, and plain reads are unchanged", async () => {
    fx.write({ "read.txt": "one\n  two\n\tthree\n" });
    const host = await fx.host();
    const full = await ok(host, "read_file", { path: "read.txt", anchors: true });
    assert.equal(full.content, `1#${lineId("one")}|one\n2#${lineId("  two")}|  two\n3#${lineId("\tthree")}|\tthree\n`);
    const range = await ok(host, "read_file_range", { path: "read.txt", start_line: 2, end_line: 3, anchors: true });
    assert.equal(range.content, `2#${lineId("  two")}|  two\n3#${lineId("\tthree")}|\tthree\n`);
    const plain = await ok(host, "read_file", { path: "read.txt", force: true });
    assert.equal(plain.content, "one\n  two\n\tthree\n");
  });

  test("an anchored read is sent even when the plain text was already read", async () => {
    fx.write({ "again.txt": "x\n" });
    const host = await fx.host();
    await ok(host, "read_file", { path: "again.txt" });
    const r = await ok(host, "read_file", { path: "again.txt", anchors: true });
    assert.equal(r.content, `1#${lineId("x")}|x\n`);
  });
});

describe("hash_edit", () => {
  test("round trip: every op, applied together, with fresh anchors for the changed regions", async () => {
    fx.write({ "rt.txt": "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "rt.txt");
    const r = await ok(host, "hash_edit", {
      path: "rt.txt",
      edits: [
        { op: "replace", pos: a.get(2), lines: ["BETA", "BETA2"] },
        { op: "insert_before", pos: a.get(1), lines: ["zero"] },
        { op: "insert_after", pos: a.get(3), lines: ["gamma2"] },
        { op: "delete", pos: a.get(5) },
      ],
    });
    assert.equal(disk("rt.txt"), "zero\nalpha\nBETA\nBETA2\ngamma\ngamma2\ndelta\nzeta\n");
    assert.equal(r.written, true);
    assert.equal(r.total_lines, 8);
    // The regions are exactly what a fresh anchored read shows for those lines.
    const fresh = await ok(host, "read_file", { path: "rt.txt", anchors: true });
    const freshRows = fresh.content.split("\n");
    for (const reg of r.regions)
      assert.equal(reg.anchors, freshRows.slice(reg.start_line - 1, reg.end_line).join("\n") + "\n");
    assert.deepEqual(
      r.regions.map((g: any) => [g.start_line, g.end_line]),
      [[1, 8]],
    );
    assert.deepEqual(r.shifts, [
      { from_line: 1, by: 1 },
      { from_line: 3, by: 2 },
      { from_line: 4, by: 3 },
      { from_line: 6, by: 2 },
    ]);
  });

  test("chained edits use the anchors a result gives, with no read in between", async () => {
    fx.write({ "chain.ts": Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n") + "\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "chain.ts");
    const r1 = await ok(host, "hash_edit", {
      path: "chain.ts",
      edits: [{ op: "replace", pos: a.get(10), end: a.get(12), lines: ["ten to twelve"] }],
    });
    const reg = anchorsOf(r1.regions[0].anchors);
    assert.deepEqual([...reg.keys()], [8, 9, 10, 11, 12]);
    const r2 = await ok(host, "hash_edit", {
      path: "chain.ts",
      edits: [{ op: "insert_after", pos: reg.get(10), lines: ["after ten"] }],
    });
    // An anchor far below the first edit: same ID, line moved by the shift the first result reported.
    assert.deepEqual(r1.shifts, [{ from_line: 13, by: -2 }]);
    const old30 = a.get(30)!;
    const moved = `${30 + r1.shifts[0].by + r2.shifts[0].by}#${old30.split("#")[1]}`;
    await ok(host, "hash_edit", { path: "chain.ts", edits: [{ op: "delete", pos: moved }] });
    const lines = disk("chain.ts").split("\n");
    assert.equal(lines[9], "ten to twelve");
    assert.equal(lines[10], "after ten");
    assert.equal(lines.includes("line 30"), false);
    assert.equal(lines.includes("line 29") && lines.includes("line 31"), true);
  });

  test("a stale anchor after another process's change refuses the whole call, quotes the line, and leaves the file untouched", async () => {
    fx.write({ "stale.ts": "const a = 1;\nconst b = 2;\nconst c = 3;\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "stale.ts");
    otherProcessWrites("stale.ts", "const a = 1;\nconst b = 20;\nconst c = 3;\n");
    const before = snapshot("stale.ts");
    const out = await call(host, "hash_edit", {
      path: "stale.ts",
      edits: [
        { op: "replace", pos: a.get(1), lines: ["const a = 100;"] }, // still valid
        { op: "replace", pos: a.get(2), lines: ["const b = 200;"] }, // stale
      ],
    });
    const reason = expectRefused(out).reason;
    assert.ok(
      reason.includes(`edits[1].pos \`${a.get(2)}\`: line 2 is now \`${anchoredLine(2, "const b = 20;")}\``),
      reason,
    );
    assert.doesNotMatch(reason, /edits\[0\]/);
    assert.deepEqual(snapshot("stale.ts"), before);
    // The quote is enough to retry: no re-read.
    const quoted = /line 2 is now `(\d+#[0-9A-Z]{4})\|/.exec(reason)![1];
    await ok(host, "hash_edit", {
      path: "stale.ts",
      edits: [
        { op: "replace", pos: a.get(1), lines: ["const a = 100;"] },
        { op: "replace", pos: quoted, lines: ["const b = 200;"] },
      ],
    });
    assert.equal(disk("stale.ts"), "const a = 100;\nconst b = 200;\nconst c = 3;\n");
  });

  test("a change elsewhere since the read is refused by the read-before-write rule, as for edit_file", async () => {
    fx.write({ "elsewhere.txt": "keep\nedit me\ntail\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "elsewhere.txt");
    otherProcessWrites("elsewhere.txt", "keep\nedit me\ntail changed\n");
    const before = snapshot("elsewhere.txt");
    const out = await call(host, "hash_edit", {
      path: "elsewhere.txt",
      edits: [{ op: "replace", pos: a.get(2), lines: ["edited"] }],
    });
    assert.match(expectRefused(out).reason, /changed since you read it/);
    assert.deepEqual(snapshot("elsewhere.txt"), before);
  });

  test("a file never read in the session is refused, and no line is quoted", async () => {
    fx.write({ "unread.txt": "secret line\n" });
    const host = await fx.host();
    const out = await call(
      host,
      "hash_edit",
      { path: "unread.txt", edits: [{ op: "delete", pos: "1#AAAA" }] },
      "fresh-session",
    );
    assert.match(expectRefused(out).reason, /not read it in this session/);
    assert.doesNotMatch(JSON.stringify(out), /secret line/);
    assert.equal(disk("unread.txt"), "secret line\n");
  });

  test("a symbolic link is not edited through, and its target is untouched", async () => {
    fx.write({ "real.txt": "one\ntwo\n" });
    symlinkSync(path.join(fx.root, "real.txt"), path.join(fx.root, "alias.txt"));
    const host = await fx.host();
    const a = await readAnchors(host, "real.txt");
    const before = snapshot("real.txt");
    const out = await call(host, "hash_edit", { path: "alias.txt", edits: [{ op: "delete", pos: a.get(1) }] });
    assert.match(expectRefused(out).reason, /symbolic link/);
    assert.deepEqual(snapshot("real.txt"), before);
  });

  test("overlapping edits are refused, and the file is untouched", async () => {
    fx.write({ "ov.txt": "1\n2\n3\n4\n5\n6\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "ov.txt");
    const before = snapshot("ov.txt");
    const cases = [
      [
        { op: "replace", pos: a.get(2), end: a.get(4), lines: ["x"] },
        { op: "delete", pos: a.get(4), end: a.get(5) },
      ],
      [
        { op: "replace", pos: a.get(2), end: a.get(4), lines: ["x"] },
        { op: "insert_after", pos: a.get(3), lines: ["y"] },
      ],
      [
        { op: "delete", pos: a.get(2), end: a.get(4) },
        { op: "insert_before", pos: a.get(3), lines: ["y"] },
      ],
      [
        { op: "insert_after", pos: a.get(2), lines: ["a"] },
        { op: "insert_before", pos: a.get(3), lines: ["b"] },
      ],
      [
        { op: "replace", pos: a.get(1), lines: ["x"] },
        { op: "replace", pos: a.get(1), lines: ["y"] },
      ],
      [
        { op: "delete", pos: a.get(1), end: a.get(6) },
        { op: "delete", pos: a.get(6) },
      ],
    ];
    for (const edits of cases) {
      const out = await call(host, "hash_edit", { path: "ov.txt", edits });
      assert.equal(out.status, "refused", JSON.stringify(edits));
      assert.match(expectRefused(out).reason, /overlap/);
    }
    assert.deepEqual(snapshot("ov.txt"), before);
    // Touching but not overlapping is fine: insert before a replaced range, after it, and a delete next to it.
    await ok(host, "hash_edit", {
      path: "ov.txt",
      edits: [
        { op: "insert_before", pos: a.get(2), lines: ["before"] },
        { op: "replace", pos: a.get(2), end: a.get(3), lines: ["R"] },
        { op: "insert_after", pos: a.get(3), lines: ["after"] },
        { op: "delete", pos: a.get(4) },
      ],
    });
    assert.equal(disk("ov.txt"), "1\nbefore\nR\nafter\n5\n6\n");
  });

  test("bad arguments are errors that name the fix", async () => {
    fx.write({ "args.txt": "a\nb\n" });
    const host = await fx.host();
    const a = await readAnchors(host, "args.txt");
    const msg = async (edits: unknown) => {
      const out = await call(host, "hash_edit", { path: "args.txt", edits });
      return JSON.stringify(out);
    };
    assert.match(
      await msg([{ op: "replace", pos: "2", lines: ["x"] }]),
      /Expected `edits\[0\]\.pos` to be an anchor `N#ID`/,
    );
    assert.match(await msg([{ op: "replace", pos: a.get(1) }]), /Missing `edits\[0\]\.lines`/);
    assert.match(await msg([{ op: "delete", pos: a.get(1), lines: ["x"] }]), /not used by delete/);
    assert.match(
      await msg([{ op: "insert_after", pos: a.get(1), end: a.get(2), lines: ["x"] }]),
      /only for replace and delete/,
    );
    assert.match(
      await msg([{ op: "replace", pos: a.get(2), end: a.get(1), lines: ["x"] }]),
      /Expected `edits\[0\]\.end` to be at or after pos/,
    );
    assert.match(await msg([{ op: "replace", pos: a.get(1), lines: [`${a.get(1)}|a changed`] }]), /N#ID\|` prefix/);
    assert.match(
      await msg([{ op: "replace", pos: "9#AAAA", lines: ["x"] }]),
      /line 9 is past the end \(the file has 2 lines\)/,
    );
    assert.equal(disk("args.txt"), "a\nb\n");
  });

  test("CRLF files stay CRLF; a file without a final newline keeps that", async () => {
    fx.write({ "crlf.txt": "one\r\ntwo\r\nthree\r\n", "nofinal.txt": "one\ntwo" });
    const host = await fx.host();
    const r = await ok(host, "read_file", { path: "crlf.txt", anchors: true });
    assert.doesNotMatch(r.content, /\r/);
    const a = anchorsOf(r.content);
    assert.equal(a.get(2), `2#${lineId("two")}`);
    await ok(host, "hash_edit", {
      path: "crlf.txt",
      edits: [
        { op: "replace", pos: a.get(2), lines: ["TWO", "two and a half"] },
        { op: "insert_after", pos: a.get(3), lines: ["four"] },
      ],
    });
    assert.equal(disk("crlf.txt"), "one\r\nTWO\r\ntwo and a half\r\nthree\r\nfour\r\n");
    const b = await readAnchors(host, "nofinal.txt");
    await ok(host, "hash_edit", {
      path: "nofinal.txt",
      edits: [{ op: "insert_after", pos: b.get(2), lines: ["three"] }],
    });
    assert.equal(disk("nofinal.txt"), "one\ntwo\nthree");
    const c = await readAnchors(host, "nofinal.txt");
    await ok(host, "hash_edit", { path: "nofinal.txt", edits: [{ op: "delete", pos: c.get(3) }] });
    assert.equal(disk("nofinal.txt"), "one\ntwo");
  });

  test("a 10,000-line file of mostly identical lines: the line number keeps each anchor unambiguous", async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? "  return null;" : i % 3 === 1 ? "}" : ""));
    fx.write({ "big.ts": lines.join("\n") + "\n" });
    const host = await fx.host();
    const exact = await call(host, "edit_file", {
      path: "big.ts",
      old_string: "  return null;",
      new_string: "  return 0;",
    });
    assert.notEqual(exact.status, "ok"); // (unread, and ambiguous anyway: the exact-string path cannot do this)
    const r = await ok(host, "read_file_range", { path: "big.ts", start_line: 4999, end_line: 5003, anchors: true });
    const a = anchorsOf(r.content);
    assert.equal(a.get(5002)!.split("#")[1], a.get(4999)!.split("#")[1]); // same text, same ID
    await ok(host, "hash_edit", {
      path: "big.ts",
      edits: [{ op: "replace", pos: a.get(5002), lines: ["  return 5002;"] }],
    });
    const after = disk("big.ts").split("\n");
    assert.equal(after.length, 10_001);
    const changed = after.map((l, i) => (l !== (lines[i] ?? "") ? i + 1 : 0)).filter(Boolean);
    assert.deepEqual(changed, [5002]);
    assert.equal(after[5001], "  return 5002;");
  });

  test("through the host: the approver sees the exact diff, and the approved write is that diff", async () => {
    const original = "a\nb\nc\nd\n";
    fx.write({ "appr.txt": original });
    const seen: string[] = [];
    const host = await fx.host({
      envelope: "strict",
      approver: {
        name: "capture",
        request: async (req) => (
          req.tool === "hash_edit" && seen.push(req.diff ?? "<none>"),
          { approved: true, by: "test" }
        ),
      },
    });
    const a = await readAnchors(host, "appr.txt");
    await ok(host, "hash_edit", {
      path: "appr.txt",
      edits: [
        { op: "replace", pos: a.get(2), lines: ["B"] },
        { op: "delete", pos: a.get(4) },
      ],
    });
    assert.equal(seen.length, 1, "the strict envelope asks before a write");
    assert.equal(applyPatch(original, seen[0]), disk("appr.txt"));
    assert.equal(disk("appr.txt"), "a\nB\nc\n");
    // A refused approval writes nothing.
    const no = await fx.host({
      envelope: "strict",
      approver: { name: "reads only", request: async (req) => ({ approved: req.tool !== "hash_edit", by: "test" }) },
    });
    const b = await readAnchors(no, "appr.txt", "other");
    const before = snapshot("appr.txt");
    const out = await call(no, "hash_edit", { path: "appr.txt", edits: [{ op: "delete", pos: b.get(1) }] }, "other");
    assert.equal(out.status, "refused");
    assert.deepEqual(snapshot("appr.txt"), before);
  });

  test("the approval diff (the tool's preview, through the diff builder) equals the write", async () => {
    const original = "import x from 'x';\n\nfunction f() {\n  return 1;\n}\n\nfunction g() {\n  return 1;\n}\n";
    fx.write({ "pv.ts": original });
    const host = await fx.host();
    const a = await readAnchors(host, "pv.ts");
    const edits = [
      { op: "replace" as const, pos: a.get(8)!, lines: ["  return 2;"] },
      { op: "insert_after" as const, pos: a.get(1)!, lines: ["import y from 'y';"] },
    ];
    const target = await resolvePath({ root: fx.root, controlPlane: [], deniedSubstrings: [] }, "pv.ts", {
      forWrite: true,
    });
    const preview = await hashEdit.preview!({ path: "pv.ts", edits }, { paths: [target], target, base: null }, {
      files: LOCAL_FILES,
      signal: new AbortController().signal,
    } as ToolEnv);
    const built = buildDiff("pv.ts", preview.before, preview.after);
    assert.equal(built.complete, true);
    assert.equal(disk("pv.ts"), original); // previewing wrote nothing
    await ok(host, "hash_edit", { path: "pv.ts", edits });
    assert.equal(applyPatch(original, built.diff!), disk("pv.ts"));
    assert.deepEqual(preview.after, readFileSync(path.join(fx.root, "pv.ts")));
    assert.match(built.diff!, /^- {2}return 1;\n\+ {2}return 2;$/m);
  });
});
