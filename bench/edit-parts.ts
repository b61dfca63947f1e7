// Two parts of an edit's thread time, alone: the diff a write shows (src/edit/diff.ts buildDiff) and
// the pre-image's deflate before the undo store keeps it (src/fs/preimages.ts), on the edit bench's
// 3.6 KB file, on a 16 KB source file and on a 1.8 MB one, with a one-line change. The whole edit
// cycle's CPU (bench/walk-cost.ts) swings by more than these parts, so they are timed by themselves.
// Usage: node --import tsx bench/edit-parts.ts [--base DIR [--label NAME]]   (DIR: another checkout,
// e.g. a `git archive` of the commit before, named NAME in the table; its buildDiff takes turns with
// this tree's)
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { deflateRawSync } from "node:zlib";
import { baseCheckout, measuredLine, median, publish, REPO, thisTree, watchLoad } from "./report.js";

type BuildDiff = (rel: string, before: Buffer, after: Buffer) => unknown;
const ROUNDS = 9;
const CALLS = 4000;

function timeUs(fn: () => unknown, calls: number): number {
  for (let i = 0; i < calls / 4; i++) fn(); // warm-up: optimised code, as in a long-running server
  const t = performance.now();
  for (let i = 0; i < calls; i++) fn();
  return ((performance.now() - t) * 1000) / calls;
}

async function main(): Promise<void> {
  const load = watchLoad();
  const { base, label, flags } = baseCheckout();
  const load_ = async (repo: string) =>
    ((await import(pathToFileURL(path.join(repo, "src/edit/diff.ts")).href)) as { buildDiff: BuildDiff }).buildDiff;
  const trees: [string, BuildDiff][] = [[thisTree(), await load_(REPO)]];
  if (base) trees.unshift([`${label} (before)`, await load_(base)]);
  const source = readFileSync(path.join(REPO, "src/host/pipeline.ts"));
  const changed = source.toString("utf8").split("\n");
  changed[99] += " // changed";
  // A large real source file, present in every checkout after npm ci.
  const big = readFileSync(path.join(REPO, "node_modules/typescript/lib/lib.dom.d.ts"), "utf8");
  const bigChanged = big.split("\n");
  bigChanged[bigChanged.length >> 1] += " // changed";
  const files: [string, Buffer, Buffer, number][] = [
    [
      "the edit bench's file (3.6 KB)",
      Buffer.from("counter 5\n" + "filler line\n".repeat(300)),
      Buffer.from("counter 6\n" + "filler line\n".repeat(300)),
      CALLS,
    ],
    [
      `src/host/pipeline.ts (${(source.length / 1024).toFixed(1)} KB), its line 100 changed`,
      source,
      Buffer.from(changed.join("\n")),
      CALLS,
    ],
    [
      `typescript's lib.dom.d.ts (${(big.length / 1024).toFixed(0)} KB), its middle line changed`,
      Buffer.from(big),
      Buffer.from(bigChanged.join("\n")),
      CALLS / 100,
    ],
  ];
  const rows: string[] = [];
  for (const [what, before, after, calls] of files) {
    const diff = new Map<string, number[]>(trees.map(([t]) => [t, []]));
    const level = new Map<number, number[]>([
      [6, []],
      [1, []],
    ]);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [t, fn] of trees) diff.get(t)!.push(timeUs(() => fn("f.ts", before, after), calls));
      for (const l of [6, 1]) level.get(l)!.push(timeUs(() => deflateRawSync(before, { level: l }), calls));
    }
    for (const [t, xs] of diff) rows.push(`| ${what} | buildDiff, ${t} | ${median(xs).toFixed(1)} | |`);
    for (const [l, xs] of level)
      rows.push(
        `| ${what} | deflate level ${l}${l === 1 ? " (this tree)" : ""} | ${median(xs).toFixed(1)} | ${deflateRawSync(before, { level: l }).length} |`,
      );
  }
  load.stop();
  publish(
    "edit-parts",
    "An edit's diff and pre-image deflate, alone (issue 32, point 3)",
    [
      measuredLine(`node --import tsx bench/edit-parts.ts${flags}`, load),
      "",
      `Median of ${ROUNDS} rounds of ${CALLS} calls each (${CALLS / 100} for lib.dom.d.ts), after a warm-up, in one process; the trees' buildDiff take turns.`,
      "",
      "| file | part | µs per call | bytes kept |",
      "|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
}

await main();
