// The collector's path order: rg finishes files in any order, and a search that runs to its end must
// still keep the first matches by path (grep runs rg once for that, not a second time sorted).
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatHits, GrepCollector, type FileHits } from "../../src/browse/grep-collect.js";

function hits(path: string, matchLines: number[], context: number[] = []): FileHits {
  const lines = [
    ...matchLines.map((n) => ({ n, text: `m${n}`, match: true, col: 0 })),
    ...context.map((n) => ({ n, text: `c${n}`, match: false, col: 0 })),
  ].sort((a, b) => a.n - b.n);
  return { path, lines, matches: matchLines.length };
}

const kept = (c: GrepCollector) =>
  c.files.map((f) => `${f.path}:${f.lines.map((l) => (l.match ? l.n : `-${l.n}`)).join(",")}`);

test("path order: files arriving last but sorting first displace the kept ones", () => {
  const c = new GrepCollector(5, 0, true);
  // Arrival order is the reverse of path order, and "a/x" sorts before "a-b" (a folder's entries first).
  c.add(hits("z.txt", [1, 2, 3]));
  c.add(hits("a-b/y.txt", [4, 5]));
  c.add(hits("a/x.txt", [1, 2, 3, 4]));
  assert.deepEqual(kept(c), ["a/x.txt:1,2,3,4", "a-b/y.txt:4"]);
  assert.equal(c.stored, 5);
  assert.equal(c.total, 9);
  assert.equal(c.filesMatched, 3);
});

test("path order: a trimmed file keeps the context of its kept matches only", () => {
  const c = new GrepCollector(2, 1, true);
  c.add(hits("b.txt", [2, 6], [1, 3, 5, 7]));
  c.add(hits("a.txt", [4], [3, 5]));
  assert.deepEqual(kept(c), ["a.txt:-3,4,-5", "b.txt:-1,2,-3"]);
});

test("arrival order (the JS engine's walk is already in path order): the first files keep the cap", () => {
  const c = new GrepCollector(3, 0);
  c.add(hits("z.txt", [1, 2]));
  c.add(hits("a.txt", [1, 2]));
  assert.deepEqual(kept(c), ["z.txt:1,2", "a.txt:1"]);
});

test("path order: any arrival order keeps the first matches by path, across the collector's cuts", () => {
  // 60 files, arriving in a shuffled order (rg's parallel walk), with caps small enough that the
  // collector cuts to the cap several times on the way, and large enough that it never does.
  let seed = 7;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const all = Array.from({ length: 60 }, (_, i) => {
    const lines = Array.from({ length: 1 + (i % 4) }, (_, k) => 10 * k + 2);
    return hits(
      `d${i % 7}/f${String(i).padStart(2, "0")}.txt`,
      lines,
      lines.map((n) => n + 1),
    );
  });
  const byPath = [...all].sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const cap of [1, 5, 17, 40, 149, 1000]) {
    for (let round = 0; round < 5; round++) {
      const order = [...all];
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      const c = new GrepCollector(cap, 1, true);
      for (const h of order) c.add(h);
      // What a walk in path order would keep: the first `cap` matching lines, each with its context.
      const want: string[] = [];
      let left = cap;
      for (const f of byPath) {
        const keptLines: string[] = [];
        for (const l of f.lines) {
          if (l.match) {
            if (left === 0) break;
            left--;
          }
          keptLines.push(l.match ? String(l.n) : `-${l.n}`);
        }
        if (keptLines.some((x) => !x.startsWith("-"))) want.push(`${f.path}:${keptLines.join(",")}`);
      }
      assert.deepEqual(kept(c), want, `cap ${cap}, round ${round}`);
      assert.equal(c.stored, Math.min(cap, 150));
      assert.equal(c.total, 150);
      assert.equal(c.filesMatched, 60);
    }
  }
});

test("the listing's byte limit: as many whole lines as fit, counted in UTF-8 bytes, for any limit", () => {
  // 1-, 2-, 3- and 4-byte characters (the last is two UTF-16 units), so characters and bytes differ;
  // and a listing of 3-byte characters only, where bytes are 3× the characters.
  const mixed = ["plain ascii", "café é", "日本語のテキスト", "emoji 😀😀", "mixé 日 😀"];
  const wide = ["日本語のテキスト".repeat(4), "語".repeat(40), "の"];
  for (const texts of [mixed, wide]) {
    const files: FileHits[] = Array.from({ length: 12 }, (_, i) => ({
      path: `日本語/日本語${i}`,
      lines: texts.map((text, k) => ({ n: k + 1, text, match: true, col: 0 })),
      matches: texts.length,
    }));
    const all = formatHits(files, false, 0, 1e9).text.split("\n");
    const total = all.reduce((sum, l) => sum + Buffer.byteLength(l) + 1, 0);
    for (let maxBytes = 0; maxBytes <= total + 10; maxBytes += 7) {
      // What fits: the longest prefix of lines whose bytes (each with its newline) stay within the limit.
      let bytes = 0;
      let n = 0;
      while (n < all.length && bytes + Buffer.byteLength(all[n]) + 1 <= maxBytes)
        bytes += Buffer.byteLength(all[n++]) + 1;
      const out = formatHits(files, false, 0, maxBytes);
      assert.equal(out.text, all.slice(0, n).join("\n"), `maxBytes ${maxBytes}`);
      assert.equal(out.shown, n);
      assert.equal(out.cutByBytes, n < all.length);
    }
  }
});
