// The canonical path of an existing path: glibc's realpath(3) (realpathSync.native) against the
// kernel's lookup latch uses (realpathOf, src/fs/realpath.ts: open with O_PATH, readlink of
// /proc/self/fd), on an ordinary path three folders down and on chains of links a model's shell can
// make: L links, each with an absolute target D folders deep, the last leading to a file.
//   node --import tsx bench/realpath-depth.ts [--no-write]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { realpathOf } from "../src/fs/realpath.js";
import { measuredLine, median, noiseNote, publish, watchLoad } from "./report.js";

const load = watchLoad();
const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-realpath-bench-")));

/** µs per call of `f(p)`, the median of 5 rounds of `n` calls (each round after one untimed call). */
function time(f: (p: string) => string, p: string, n: number): number {
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    f(p);
    const t = performance.now();
    for (let i = 0; i < n; i++) f(p);
    rounds.push(((performance.now() - t) * 1000) / n);
  }
  return median(rounds);
}

/** `links` links, each an absolute target `depth` folders down to the next, the last to a file. */
function chain(depth: number, links: number): string {
  const ws = mkdtempSync(path.join(base, "c-"));
  const deep = path.join(ws, ...Array<string>(depth).fill("a"));
  mkdirSync(deep, { recursive: true });
  writeFileSync(path.join(deep, "file"), "x");
  for (let i = 0; i < links; i++)
    symlinkSync(path.join(deep, i + 1 === links ? "file" : `L${i + 1}`), path.join(deep, `L${i}`));
  symlinkSync(path.join(deep, "L0"), path.join(ws, "start"));
  return path.join(ws, "start");
}

try {
  const plain = path.join(base, "p/src/deep/er");
  mkdirSync(plain, { recursive: true });
  writeFileSync(path.join(plain, "f.txt"), "x");
  const rows: [string, string, number][] = [
    ["an ordinary file, three folders down", path.join(plain, "f.txt"), 20000],
    ["10 links, targets 100 folders deep", chain(100, 10), 2000],
    ["38 links, targets 500 folders deep", chain(500, 38), 20],
    ["38 links, targets 1,900 folders deep", chain(1900, 38), 2],
  ];
  const lines = ["| path | realpath(3), µs a call | realpathOf, µs a call | ratio |", "|---|---|---|---|"];
  for (const [what, p, n] of rows) {
    if (realpathOf(p) !== realpathSync.native(p)) throw new Error(`the two disagree on ${what}`);
    const glibc = time((x) => realpathSync.native(x), p, n);
    const kernel = time(realpathOf, p, n);
    lines.push(`| ${what} | ${glibc.toFixed(1)} | ${kernel.toFixed(1)} | ${(glibc / kernel).toFixed(1)}× |`);
  }
  load.stop();
  publish(
    "realpath-depth",
    "The canonical path: realpath(3) against the kernel's lookup (src/fs/realpath.ts)",
    [
      measuredLine("node --import tsx bench/realpath-depth.ts", load),
      noiseNote(load),
      "",
      "glibc's realpath(3) resolves in user space and reads each link's target again from its start, so a chain of links with deep absolute targets costs it links × depth lookups on every call; the kernel's walk (one `open` with O_PATH, one `readlink` of /proc/self/fd, one `close`) follows each link once. The resolver, the sandbox's walk of the workspace (every link, before each contained process and each answer's disclosure step), the masks and the skills all take `realpathOf`.",
      "",
      ...lines,
    ].join("\n"),
  );
} finally {
  execFileSync("rm", ["-rf", base]); // Node's rmSync recurses once per folder: 1,900 overflow its stack
}
