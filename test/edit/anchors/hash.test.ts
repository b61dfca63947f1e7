import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ID_ALPHABET, anchorWindow, lineId, parseAnchor, splitLines } from "../../../src/edit/anchors.js";
import { ToolError } from "../../../src/errors.js";

describe("line IDs", () => {
  test("are 4 characters of an alphabet without I, L, O or U", () => {
    assert.equal(new Set(ID_ALPHABET).size, 32);
    for (const bad of "ILOU") assert.equal(ID_ALPHABET.includes(bad), false);
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (s) => /^[0-9A-HJKMNP-TV-Z]{4}$/.test(lineId(s))),
    );
  });

  test("depend on the content only, and are stable", () => {
    assert.equal(lineId("  return x;"), lineId("  return x;"));
    assert.equal(lineId(""), "0000");
    assert.notEqual(lineId("\treturn x;"), lineId("    return x;"));
    assert.notEqual(lineId("a "), lineId("a"));
  });

  // The property the issue asks for: any one-character change alters the ID. Characters are drawn
  // from planes 0-2 (every script, emoji and CJK extension), where any two differ by less than P.
  const anyChar = fc
    .integer({ min: 0, max: 0x2ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c));
  const char = fc.oneof(fc.constantFrom(" ", "\t", "a", "A", "0", ";", "\u00a0", "é", "“"), anyChar);
  const line = fc
    .array(fc.oneof(fc.constantFrom(" ", "\t", "{", "}", ";", "a", "b"), anyChar), { maxLength: 120 })
    .map((a) => a.join(""));

  test("change when one character is replaced", () => {
    fc.assert(
      fc.property(line, fc.nat(), char, (s, at, c) => {
        const cps = [...s];
        fc.pre(cps.length > 0);
        const i = at % cps.length;
        fc.pre(cps[i] !== c);
        cps[i] = c;
        assert.notEqual(lineId(cps.join("")), lineId(s));
      }),
      { numRuns: 5000 },
    );
  });

  test("change when one character is inserted or deleted", () => {
    fc.assert(
      fc.property(line, fc.nat(), char, (s, at, c) => {
        const cps = [...s];
        const i = at % (cps.length + 1);
        const inserted = [...cps.slice(0, i), c, ...cps.slice(i)].join("");
        assert.notEqual(lineId(inserted), lineId(s));
        if (cps.length > 0) {
          const j = at % cps.length;
          assert.notEqual(lineId([...cps.slice(0, j), ...cps.slice(j + 1)].join("")), lineId(s));
        }
      }),
      { numRuns: 5000 },
    );
  });

  test("rarely collide across the lines of a real-sized file", () => {
    const ids = new Set<string>();
    let n = 0;
    for (let i = 0; i < 20000; i++) {
      const text = `  const value${i} = compute(${i * 7}, "${(i * 31) % 977}");`;
      ids.add(lineId(text));
      n++;
    }
    // 20,000 distinct lines over 2^20 IDs: the birthday bound expects ~190 shared IDs; far more means a weak hash.
    assert.ok(n - ids.size < 600, `${n - ids.size} collisions`);
  });
});

describe("anchors", () => {
  test("parse as N#ID, tolerating a copied |text tail, lower case and O/I/L look-alikes", () => {
    assert.deepEqual(parseAnchor("12#K3FZ", "pos"), { line: 12, id: "K3FZ" });
    assert.deepEqual(parseAnchor("12#k3fz|  const x = 1;", "pos"), { line: 12, id: "K3FZ" });
    assert.deepEqual(parseAnchor(" 7 # OIL2 ", "pos"), { line: 7, id: "0112" });
  });

  test("without an ID, or with line 0, are errors that show the expected form", () => {
    for (const bad of ["12", "#K3FZ", "0#K3FZ", "twelve#K3FZ", "12#", ""]) {
      assert.throws(
        () => parseAnchor(bad, "edits[0].pos"),
        (err: unknown) =>
          err instanceof ToolError &&
          err.code === "EINVAL" &&
          /Expected `edits\[0\]\.pos` to be an anchor `N#ID`/.test(err.message),
      );
    }
  });

  test("lines split as the line tools count them, keeping each line's ending", () => {
    assert.deepEqual(splitLines(""), []);
    assert.deepEqual(splitLines("a\r\nb\nc"), [
      { text: "a", eol: "\r\n" },
      { text: "b", eol: "\n" },
      { text: "c", eol: "" },
    ]);
    assert.deepEqual(splitLines("a\n\n"), [
      { text: "a", eol: "\n" },
      { text: "", eol: "\n" },
    ]);
    assert.deepEqual(splitLines("x\ry\n"), [{ text: "x\ry", eol: "\n" }]);
  });

  test("an anchored window is cut at whole lines to the output budget", () => {
    const content = Array.from({ length: 50 }, (_, i) => `line number ${i + 1}`).join("\n") + "\n";
    const w = { content, startLine: 1, endLine: 50, totalLines: 50, bytes: content.length, sha256: "" };
    const a = anchorWindow(w, 200);
    const rows = a.content.split("\n").filter(Boolean);
    assert.ok(Buffer.byteLength(a.content) <= 200);
    assert.equal(a.endLine, rows.length);
    assert.equal(a.nextStartLine, rows.length + 1);
    assert.equal(rows[0], `1#${lineId("line number 1")}|line number 1`);
  });
});
