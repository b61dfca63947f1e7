// confirm.ts's verdicts on what ripgrep reported of a file: nothing stands unless every folder on the
// file's way is unchanged since before rg started (reviews g60, g61), and its kept lines must read the
// same in the file latch opens inside.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { BeneathLookup, keepsSteadyTimes, STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import type { FileHits } from "../../src/browse/grep-collect.js";

const root = mkdtempSync(path.join(tmpdir(), "latch-confirm-"));
after(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(path.join(root, "d"));
writeFileSync(path.join(root, "d/many.txt"), "same\nsame\nsame\n");
writeFileSync(path.join(root, "d/blob.bin"), "\0\nsame\n");

const line = (n: number, text: string) => ({ n, text, match: true, col: 0 });
/** rg's report of d/many.txt: its first `kept` lines, and `matches` counted. */
const many = (kept: number, matches: number): FileHits => ({
  path: "d/many.txt",
  lines: Array.from({ length: kept }, (_, i) => line(i + 1, "same")),
  matches,
});
const blob: FileHits = { path: "d/blob.bin", lines: [], matches: 1 };

/** A lookup as grep makes one before rg starts: the folders here were made just now, so none is steady. */
const justMade = () => new BeneathLookup(root, Date.now() - STEADY_MARGIN_MS);
/** A lookup whose rg run started after these folders last changed (its time is taken later on). */
const unchangedSince = () => new BeneathLookup(root, Date.now() + 60_000);

/** What a lookup made before rg started says of files in folders that stood still since (none changed). */
const steady = keepsSteadyTimes(root) ? "shown" : "unsteady";

test("in folders unchanged since before rg started, lines that read the same inside are shown", () => {
  const l = unchangedSince();
  assert.equal(l.confirm(many(3, 3), false), steady);
  l.close();
});

test("a line rg reported that reads otherwise inside drops the file (changed in place since rg read it)", () => {
  if (steady !== "shown") return assert.equal(unchangedSince().confirm(many(1, 1), false), "unsteady");
  const l = unchangedSince();
  assert.equal(l.confirm({ ...many(1, 1), lines: [line(1, "other")] }, false), "dropped");
  assert.equal(l.confirm({ ...many(1, 1), lines: [line(4, "same")] }, false), "dropped", "no line 4 inside");
  l.close();
});

test("in folders unchanged since, rg's count past the kept lines and a binary match stand", () => {
  const l = unchangedSince();
  assert.equal(l.confirm(many(2, 1500), false), steady);
  assert.equal(l.confirm(blob, true), steady);
  l.close();
});

test("attack: a folder changed since before rg started sets rg's whole word aside, lines and all", () => {
  // rg may have read another file by that name: a line that reads the same, a count, a binary match,
  // or the file's absence would each tell of it (review g61).
  const l = justMade();
  assert.equal(l.confirm(many(3, 3), false), "unsteady");
  assert.equal(l.confirm(many(2, 1500), false), "unsteady");
  assert.equal(l.confirm(blob, true), "unsteady");
  assert.equal(l.steadyFolder("d"), false);
  l.close();
});

test("a verdict covers what rg had read when it was made: one made before a folder changed is forgotten", async () => {
  mkdirSync(path.join(root, "e"));
  writeFileSync(path.join(root, "e/blob.bin"), "\0\nsame\n");
  const pause = () => new Promise((r) => setTimeout(r, 30)); // past the kernel's coarse clock tick
  await pause();
  const l = new BeneathLookup(root, Date.now()); // "rg started" after e was made
  await pause();
  const e = { ...blob, path: "e/blob.bin" };
  assert.equal(l.confirm(e, true), steady);
  writeFileSync(path.join(root, "e/new.txt"), "x"); // e changes after that verdict was made
  l.forgetSteady(); // as grep does when more of rg's output arrives
  assert.equal(l.confirm(e, true), "unsteady");
  l.close();
});
