// buildDiff's text check and line split (src/edit/diff.ts), below the approval tests that replay it
// through the host: content that is not UTF-8 gets no diff, whichever side it is on, even where it is
// mostly text (so looksBinary passes it); every ending (LF, CRLF, a lone CR, none) survives a replay;
// and the diff, which skips the shared head and tail on the bytes, is the one the whole split gives.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FILE_HEADERS_ONLY, applyPatch, formatPatch, structuredPatch } from "diff";
import { buildDiff } from "../../src/edit/diff.js";
import { rng } from "../helpers/rng.js";

const text = (s: string) => Buffer.from(s, "utf8");

describe("buildDiff", () => {
  test("no diff for bytes that are not UTF-8: a Latin-1 letter, an encoded surrogate, a cut sequence", () => {
    const ascii = "plain line\n".repeat(50);
    for (const bad of [
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), // "café" in Latin-1
      Buffer.from([0xed, 0xa0, 0x80, 0x0a]), // U+D800 as three bytes (CESU-8)
      Buffer.from([0x61, 0xe2, 0x82]), // "a" then the first two bytes of "€"
    ]) {
      const mixed = Buffer.concat([text(ascii), bad]);
      for (const [before, after, side] of [
        [mixed, text(ascii), "current"],
        [text(ascii), mixed, "new"],
      ] as const) {
        const d = buildDiff("f.txt", before, after);
        assert.equal(d.diff, undefined, `${bad.toString("hex")} on the ${side} side`);
        assert.equal(d.note, `no diff: the ${side} content is not UTF-8 text`);
        assert.equal(d.complete, false);
      }
    }
  });

  test("a diff of UTF-8 text with every line ending replays to the new bytes exactly", () => {
    const cases: [string, string][] = [
      ["a\nb\nc\n", "a\nB\nc\n"],
      ["a\nb\nc", "a\nb\nc\n"],
      ["a\r\nb\r\nc\r\n", "a\r\nb2\r\nc\r\n"],
      ["one\rtwo\nthree", "one\rtwo\nthree and more"],
      ["", "new file\n"],
      ["ünï\ncode €\n", "ünï\ncode £\n"],
      ["\n\n\n", "\n\nx\n"],
    ];
    for (const [from, to] of cases) {
      const d = buildDiff("f.txt", text(from), text(to));
      assert.equal(d.complete, true);
      assert.equal(applyPatch(from, d.diff!), to, JSON.stringify([from, to]));
    }
  });

  test("the same diff as splitting both sides whole, for 3,000 random edits of files of repeated lines", () => {
    const rand = rng(Number(process.env.LATCH_DIFF_SEED ?? 20261204));
    const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
    const LINES = ["a\n", "b\n", "a\r\n", "\n", "x y\n", "ü\n", "a", "b", "\r"];
    for (let i = 0; i < 3000; i++) {
      // Mostly short files; one in ten long enough that the shared ends span kilobytes, its edits
      // within 40 lines of each other (a change longer than the diff's caps is not what this compares).
      const long = rand() < 0.1;
      const from = Array.from({ length: long ? int(300, 2000) : int(0, 30) }, () => LINES[int(0, 5)]);
      const to = [...from];
      const near = int(0, Math.max(0, from.length - 40));
      for (let e = int(1, 3); e > 0; e--) {
        const at = long ? Math.min(to.length, near + int(0, 40)) : int(0, to.length);
        const op = int(0, 2);
        if (op === 0) to.splice(at, 0, LINES[int(0, 5)]);
        else if (op === 1) to.splice(at, int(1, 4));
        else to.splice(at, 1, LINES[int(0, 5)]);
      }
      // Now and then a last line without its ending (or only a CR) on either side (short files: at the end,
      // a long one would change in two places too far apart).
      if (!long && rand() < 0.2) from.push(LINES[int(6, 8)]);
      if (!long && rand() < 0.2) to.push(LINES[int(6, 8)]);
      const before = text(from.join(""));
      const after = text(to.join(""));
      const got = buildDiff("f.txt", before, after);
      assert.deepEqual(got, wholeSplitDiff(before, after), JSON.stringify([from.join(""), to.join("")]));
      if (got.diff) assert.equal(applyPatch(from.join(""), got.diff), to.join(""));
    }
  });
});

/** buildDiff as it was before the shared ends were found on the bytes: both sides split whole (small files only: no cap). */
function wholeSplitDiff(before: Buffer, after: Buffer): { complete: boolean; diff?: string; note?: string } {
  if (before.equals(after))
    return { complete: true, diff: "", note: "no change: the new content equals the current content" };
  const split = (t: string) => t.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const oldLines = split(before.toString("utf8"));
  const newLines = split(after.toString("utf8"));
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  )
    tail++;
  const from = Math.max(0, head - 3);
  const patch = structuredPatch(
    "a/f.txt",
    "b/f.txt",
    oldLines.slice(from, oldLines.length - Math.max(0, tail - 3)).join(""),
    newLines.slice(from, newLines.length - Math.max(0, tail - 3)).join(""),
    undefined,
    undefined,
    { context: 3 },
  );
  for (const h of patch.hunks) {
    h.oldStart += from;
    h.newStart += from;
  }
  const lines = formatPatch(patch, FILE_HEADERS_ONLY).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return { diff: lines.join("\n") + "\n", complete: true };
}
