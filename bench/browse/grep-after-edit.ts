// What a grep costs right after an edit: rg's answer stands only for a tree unchanged since 2 s before
// rg started (src/browse/steady-tree.ts), so a search within 2 s of a change in the tree is answered
// again by the JS engine. Times a steady search and one just after a file at the corpus root is
// written, on the same long-running `latch mcp` server (rg engine), in turns.
//   npm run build && node --import tsx bench/browse/grep-after-edit.ts [--corpus DIR] [--runs N]
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { median } from "../report.js";
import { NEEDLES } from "./corpus.js";
import { startLatch } from "./latch-mcp.js";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const corpus = path.resolve(opt("--corpus", "/tmp/latch-bench-corpus"));
const runs = Number(opt("--runs", "5"));

const server = await startLatch(corpus, { LATCH_GREP_ENGINE: "rg" });
const timed = async () => {
  const t0 = performance.now();
  const out = await server.call("grep", { pattern: NEEDLES.literal });
  return { ms: performance.now() - t0, by: out.display?.engine };
};
const steady: number[] = [];
const after: number[] = [];
const edits: string[] = [];
try {
  await timed(); // the folder index, warm
  for (let i = 0; i < runs; i++) {
    await new Promise((r) => setTimeout(r, 2500)); // the tree stands still
    const s = await timed();
    if (s.by !== "rg") throw new Error(`a steady tree was answered by ${s.by}`);
    steady.push(s.ms);
    // A file made at the root, as an editor's save (a temp file renamed over) changes the root.
    const made = path.join(corpus, `just-edited-${i}.txt`);
    writeFileSync(made, `edit ${i}\n`);
    edits.push(made);
    const a = await timed();
    if (a.by !== "js") throw new Error(`a tree changed just now was answered by ${a.by}`);
    after.push(a.ms);
  }
} finally {
  await server.close();
  for (const f of edits) rmSync(f, { force: true });
}
console.log(
  `grep literal over ${corpus}, median of ${runs}: steady ${median(steady).toFixed(0)} ms (rg), just after an edit at the root ${median(after).toFixed(0)} ms (the JS engine; rg not asked): ${(median(after) / median(steady)).toFixed(2)}×`,
);
