// The collector's path order: rg finishes files in any order, and a search that runs to its end must
// still keep the first matches by path (grep runs rg once for that, not a second time sorted).
import assert from "node:assert/strict";
import { test } from "node:test";
import { GrepCollector, type FileHits } from "../../src/browse/grep-collect.js";

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
