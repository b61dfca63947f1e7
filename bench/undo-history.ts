// What the undo store costs a write as a workspace's history grows (src/fs/preimages.ts): every edit keeps
// the content it replaced, and the store holds each root under a byte cap and a 20,000-call limit.
// For each history size, a store is filled to it (each call a new ~3.6 KB source file's pre-image, as
// an edit makes), then WRITES more calls are kept through the public journal (the transaction and the
// WAL's fdatasync), timing each: this tree's build and, with --before DIR, an earlier build's
// (dist/fs/preimages.js of a checkout built with `npm run build`), taking turns in blocks of 64.
// "at the cap" fills a store with a 1 MB cap to the same history, so every later write is over it.
// Usage: npm run build && node --import tsx bench/undo-history.ts [--writes N] [--before DIR] [--no-write]
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createHash } from "node:crypto";
import { REPO, measuredLine, median, noiseNote, publish, thisTree, watchLoad } from "./report.js";

const argv = process.argv;
const WRITES = argv.includes("--writes") ? Number(argv[argv.indexOf("--writes") + 1]) : 640;
const BEFORE = argv.includes("--before") ? path.resolve(argv[argv.indexOf("--before") + 1]) : undefined;
const HISTORIES = [0, 5_000, 20_000];
const BLOCK = 64;

interface Store {
  journal(info: object): { keep(files: object[]): Promise<void> };
  close(): void;
}
type StoreClass = new (file: string) => Store;
const load = async (dir: string) =>
  ((await import(pathToFileURL(path.join(dir, "dist/fs/preimages.js")).href)) as { PreImages: StoreClass }).PreImages;

const source = "export const counter = 0;\n" + "  const line = filler(line, more, words);\n".repeat(85);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
let n = 0;
/** One call's pre-image: a content never kept before. */
function next(store: Store, cap: number) {
  const i = n++;
  const before = Buffer.from(source.replace("counter = 0", `counter = ${i}`));
  const info = { callId: `c${i}`, root: "/bench", session: "s", tool: "edit_file", cap };
  return store.journal(info).keep([{ target: { rel: "f.ts" }, before, afterSha: "x", beforeSha: sha(before) }]);
}

const builds: [string, StoreClass][] = [[thisTree(), await load(REPO)]];
if (BEFORE) builds.push([`before (${path.basename(BEFORE)})`, await load(BEFORE)]);
const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-undo-history-"));
const loadWatch = watchLoad();
const rows: string[] = [];
try {
  for (const [label, cap] of [
    ...HISTORIES.map((h) => [`${h.toLocaleString("en")} calls`, 256 << 20] as const),
    [`${HISTORIES.at(-1)!.toLocaleString("en")} calls, at the cap (1 MB)`, 1 << 20] as const,
  ]) {
    const history = Number(label.split(" ")[0].replace(/,/g, ""));
    const stores = builds.map(([name, C], i) => {
      const s = new C(path.join(base, `${name.replace(/\W+/g, "-")}-${label.replace(/\W+/g, "-")}-${i}.db`));
      return { name, s, times: [] as number[], cpu: [] as number[] };
    });
    for (const st of stores) for (let k = 0; k < history; k++) await next(st.s, cap);
    for (let b = 0; b < WRITES / BLOCK; b++)
      for (const st of stores) {
        const c0 = process.cpuUsage();
        const t = performance.now();
        for (let k = 0; k < BLOCK; k++) await next(st.s, cap);
        st.times.push(((performance.now() - t) * 1000) / BLOCK);
        const c = process.cpuUsage(c0);
        st.cpu.push((c.user + c.system) / BLOCK);
      }
    for (const st of stores) st.s.close();
    rows.push(
      `| ${label} | ${stores.map((st) => `${median(st.times).toFixed(0)} µs, CPU ${median(st.cpu).toFixed(0)} µs`).join(" | ")} |`,
    );
  }
} finally {
  loadWatch.stop();
  rmSync(base, { recursive: true, force: true });
}
const NOTES = `**What changed** (f391483): the store kept a count of a root's stored bytes in memory and counted again at every 64th write (other processes store too) by reading every blob of the root (7 ms at 22,000 blobs), with the prune of old calls walking the call table; once a root was over its cap every write counted again and evicted a few blobs at a time, so each write at the cap read every blob. The bytes and calls of each root are now running totals in latch.db (\`undo_roots\`, migration 10, counted once from the rows), changed in the write's own transaction, so they hold across processes; an eviction goes down to 7/8 of the cap in one pass by age and never takes the pre-images of the call being kept; old calls go 64 at a time past the 20,000 kept. test/fs/undo-totals.test.ts holds the totals to a count of the rows (two processes at once, eviction, pruning, a call that keeps twice). The price is one more page in each write's transaction: at an empty history the two builds are alike here, and over MCP the edit cycle of this build against 0e758ea's, in turns (\`bench/mcp.ts --reads 2000 --edits 1000 --starts 5 --b /tmp/latch-0e758ea --no-write\`, 2026-12-05 01:55 UTC), was 0.99 per block (1.02 over all blocks).`;
const cmd = `node --import tsx bench/undo-history.ts --writes ${WRITES}${BEFORE ? ` --before ${BEFORE}` : ""}`;
publish(
  "undo-history",
  "The undo store's cost per write as history grows",
  [
    measuredLine(cmd, loadWatch),
    noiseNote(loadWatch),
    "",
    `Each history: a store (its own latch.db) filled with that many calls, each keeping a new ~3.6 KB pre-image, then ${WRITES} more kept through \`journal().keep()\` (the transaction, then the WAL's fdatasync on the thread pool), the builds taking turns in blocks of ${BLOCK}. Per write: the wall and CPU (this process, every thread) of each block over its writes, the median of the blocks (a block holds any count or eviction the store makes once in so many writes). The cap is 256 MB (the default \`_undo_max_bytes\`) but in the last row.`,
    "",
    `| history | ${builds.map(([name]) => name).join(" | ")} |`,
    `|---|${builds.map(() => "---").join("|")}|`,
    ...rows,
    "",
    NOTES,
  ].join("\n"),
);
