// What following the workspace's links costs the sandbox's walk (src/sandbox/linked.ts, reviews g36,
// g38, g39): a warm `scanWorkspace(root, [], "lenient")`, as the guard makes it before and after each
// contained call (the box's is the same walk), this tree against a base tree from before the links
// were followed (a469649 or earlier, given with --base), in turns in one process. Workspaces: this
// repository (no link out of its walk), and one with N links into node_modules (each to a folder with
// two below it, as `vendored -> node_modules/pkg/dist`), N = 20 and 200.
//   mkdir /var/tmp/latch-base && git archive a469649 | tar -x -C /var/tmp/latch-base
//   ln -s "$PWD/node_modules" /var/tmp/latch-base/node_modules && (cd /var/tmp/latch-base && node scripts/build.mjs)
//   npm run build && node --import tsx bench/scan-links.ts --base /var/tmp/latch-base [--no-write]
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measuredLine, percentile, publish, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const BASE = argv.includes("--base") ? argv[argv.indexOf("--base") + 1] : undefined;
if (!BASE) throw new Error("--base DIR: a built checkout of latch from before links were followed (see the header)");
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = 9;
const SCANS = 50;

type Scan = (root: string, denied: string[], gitlinks: "lenient") => unknown;
const load = watchLoad();
const trees: [string, Scan][] = [];
for (const [name, dir] of [
  ["base (a469649)", path.resolve(BASE)],
  ["this tree", REPO],
] as const) {
  const m = (await import(pathToFileURL(path.join(dir, "dist/sandbox/secrets.js")).href)) as { scanWorkspace: Scan };
  trees.push([name, m.scanWorkspace]);
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-links-"));
function linked(n: number): string {
  const root = path.join(tmp, `ws${n}`);
  mkdirSync(path.join(root, "src"), { recursive: true });
  for (let i = 0; i < n; i++) {
    for (const d of ["a", "b"]) mkdirSync(path.join(root, `node_modules/p${i}/lib/${d}`), { recursive: true });
    symlinkSync(`../node_modules/p${i}/lib`, path.join(root, `src/l${i}`));
  }
  return root;
}

const rows: string[] = [];
for (const [label, root] of [
  ["this repository (no link out of the walk)", REPO],
  ["20 links into node_modules", linked(20)],
  ["200 links into node_modules", linked(200)],
] as const) {
  const ms = trees.map(() => [] as number[]);
  for (const [, scan] of trees) for (let i = 0; i < 20; i++) scan(root, [], "lenient"); // warm: listings kept
  for (let r = 0; r < ROUNDS; r++)
    trees.forEach(([, scan], k) => {
      const t = performance.now();
      for (let i = 0; i < SCANS; i++) scan(root, [], "lenient");
      ms[k].push((performance.now() - t) / SCANS);
    });
  const [before, after] = ms.map((m) => percentile(m, 50));
  rows.push(`| ${label} | ${before.toFixed(2)} | ${after.toFixed(2)} | ${(after - before).toFixed(2)} |`);
}
rmSync(tmp, { recursive: true, force: true });
load.stop();

publish(
  "scan-links",
  "Following the workspace's links: the walk's cost per scan (bench/scan-links.ts)",
  [
    measuredLine("node --import tsx bench/scan-links.ts --base <a469649>", load),
    "",
    `A warm lenient walk (the guard's; the box's is the same walk), median of ${ROUNDS} rounds of ${SCANS}, the trees in turns in one process. A contained call walks about three times (the box, the guard's baseline and its check).`,
    "",
    "| workspace | ms per walk, before | after | added |",
    "|---|---|---|---|",
    ...rows,
    "",
    "Each link out of the walk is looked up (realpath: open, readlink, close), its target's folders listed (one lstat each while unchanged), and each folder above it, up to the walk's, looked at for `.git` and a git directory's marks; the walk's listings are kept, the lookups and the climb's looks are not (a folder on a link's way can change without its own ctime changing). Past 5,000 lookups or 10,000 folders through links the box refuses to start (docs/security.md).",
  ].join("\n"),
);
