// find_files `*.ts` and `*.md` on the generated corpus through a long-running `latch mcp` (MCP SDK
// client over stdio), against `rg --files -g GLOB` spawned with the same walk flags (issue 32: ≤ 1.5×).
// Runs interleave (rg, latch, and with --before an earlier build's server), so a busy moment falls on
// all alike; each latch call is timed at the client, round trip included, and the server's CPU per call
// is read from /proc (every thread's time on a CPU), and its rg's apart (the children it waited for,
// in 10 ms ticks), as the peer rg's. The file sets are compared on every run.
// Besides the long-running server (its folder index warm after the first call), it times the first
// find_files of fresh servers (the index empty: a whole walk). find_files walks under any
// LATCH_GREP_ENGINE (it picks grep's engine only), so no server of another setting is timed.
//   npm run build && node --import tsx bench/browse/corpus.ts && node --import tsx bench/browse/find-bench.ts [--runs N] [--cold N] [--before DIR [--before-label TEXT]] [--no-write]
// Writes its section between the find-files markers in bench/RESULTS.md.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { measuredLine, median, noiseNote, publish, thisTree, watchLoad } from "../report.js";
import { PEER_RG_WALK } from "./corpus.js";
import { startLatch, type LatchServer } from "./latch-mcp.js";
import { runTimed } from "./peers.js";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const corpus = path.resolve(opt("--corpus", "/tmp/latch-bench-corpus"));
const runs = Number(opt("--runs", "9"));
const before = argv.includes("--before") ? path.resolve(opt("--before", "")) : undefined;
/** What the earlier build is, for the table's note (e.g. "main at 8a09a91"). */
const beforeLabel = opt("--before-label", "");
const GLOBS = ["*.ts", "*.md"];
/** First calls timed on fresh servers, per pattern (the folder index empty). */
const coldRuns = Number(opt("--cold", "5"));

function cpuMs(pid: number): number {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1e6;
}

/** CPU ms of the children `pid` has waited for (cutime + cstime, in clock ticks of 10 ms). */
function childrenCpuMs(pid: number | "self"): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from the 3rd on
  return (Number(f[13]) + Number(f[14])) * 10;
}

type Timed = { ms: number; cpu: number; rgCpu: number; files: string[] };

async function timedFind(server: LatchServer, pattern: string): Promise<Timed> {
  const c0 = cpuMs(server.pid);
  const r0 = childrenCpuMs(server.pid);
  const t0 = performance.now();
  const { result } = await server.call("find_files", { pattern });
  const ms = performance.now() - t0;
  if (result.truncated || result.count !== result.matches.length) throw new Error(`find_files ${pattern}: capped`);
  return { ms, cpu: cpuMs(server.pid) - c0, rgCpu: childrenCpuMs(server.pid) - r0, files: result.matches as string[] };
}

function sameFiles(what: string, a: string[], b: string[]): void {
  const sa = new Set(a);
  if (sa.size !== b.length || b.some((f) => !sa.has(f)))
    throw new Error(`${what}: the file sets differ (${a.length} vs ${b.length})`);
}

const NOTES = `**What changed** (issue 32, point 4): find_files walks in-process, by descriptors, and the host keeps each steady folder's outcome (the files and folders it shows, the count it hid) for the next call (\`FolderIndex\`, src/browse/find-index.ts). A kept outcome is used while the folder, opened through its parent's descriptor (or, a leaf without a .gitignore, lstat-ed through it), has the device, inode, ctime and mtime it was listed with, and that ctime was older than 2 s when it was listed (an entry made, renamed or removed moves it; nobody can set it back); while its .gitignore holds the same text (read again each call: a write through a shared mapping moves no time) and the chain of .gitignore files above it is the same; and under the same rule (\`Visibility.key\`: root, control plane, denied substrings, the envelope's globs). So a call on an unchanged tree is a stat per folder and a read per .gitignore, where rg lists all 50,100 names again and \`--debug\` logs every hidden one. Before, find_files took its candidates from \`rg --files --debug\` (the hidden count needs that flag) and confirmed each name through descriptors. That path was kept under LATCH_GREP_ENGINE=rg, and for a tree whose folders lie below more than 64 nested .gitignore files (each entry is tested against each of them: 2,000 nested files took the walk 53 s, rg 3 s), until rg's list could stand only after the same walk (steady-tree.ts, review g61): find_files walks alone under every setting now, and a deep chain costs it the walk's time. The first call of a server lists every folder and judges every entry as the old in-process walk did, with three costs cut: the .gitignore files read synchronously (the thread pool's four round trips cost ~0.6 ms a file here), the resolver asked only for folders whose names are shown escaped (for any other, its checks are the rule's, and the folder opened from its parent's descriptor is no link), and no lstat of each file in a folder that did not move while listed. The index is bounded (~64 MiB estimated, then it starts again empty) and keeps no matcher (their caches grow with a deep chain). test/tools/find-index.test.ts tries what would make a kept outcome wrong (a folder swapped for a link, a file swapped for a link in a kept folder and during a listing, a .gitignore edited in place, above a kept leaf, and through a shared mapping, entries changed and the mtime set back, another rule, a control plane above the root, a fresh folder, the bound, a deep chain) and holds the answers to the disk; every guard it names fails a test when removed.

**Where the time goes now** (a warm call in-process through createHost: 22–30 ms wall, medians of 8, 08:40 UTC; scratch scripts): nearly all of it the walk (walkIndexed alone, warm: 17–33 ms in 7 calls): 1,200 folders each opened, fstat-ed and closed (or a leaf lstat-ed) through descriptors, 100 .gitignore files read, the glob tried on 50,100 kept names; then the pipeline (the disclosure gate's scan of the ~400 KB answer, the log's hashes of it); over MCP, the answer's JSON both ways. The first call of a fresh server (~350 ms here) is mostly its code running for the first time (V8's tiers) and the judging of 50,100 entries; the same walk with warm code and an empty index takes ~160–190 ms.

**What is left**: the first call on a tree still costs a whole walk; an index kept across server starts (in the state dir) could make it as cheap as a later one, but would have to prove each folder unchanged across the gap, which the ctime does only while the clock and the filesystem are the ones it was stamped by.`;

async function main(): Promise<void> {
  const load = watchLoad();
  const servers: Record<string, LatchServer> = {
    latch: await startLatch(corpus),
  };
  if (before) servers.before = await startLatch(corpus, {}, { cli: path.join(before, "dist/cli/main.js") });
  const rows: string[] = [];
  try {
    for (const s of Object.values(servers)) await s.call("find_files", { pattern: "warm-up-nothing" });
    for (const glob of GLOBS) {
      const t: Record<string, number[]> = {
        rg: [],
        rgCpu: [],
        cold: [],
        coldCpu: [],
        coldRgCpu: [],
        latch: [],
        before: [],
        latchCpu: [],
        beforeCpu: [],
        latchRgCpu: [],
        beforeRgCpu: [],
      };
      let count = 0;
      for (let i = 0; i <= runs; i++) {
        const p0 = childrenCpuMs("self");
        const rg = await runTimed(corpus, rgPath, ["--files", ...PEER_RG_WALK, "-g", glob, "."]);
        const peerCpu = childrenCpuMs("self") - p0;
        const rgFiles = rg.out
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => l.replace(/^\.\//, ""));
        const got: Record<string, Timed> = {};
        for (const [name, s] of Object.entries(servers)) {
          got[name] = await timedFind(s, glob);
          sameFiles(`find_files ${glob}, ${name}, run ${i}`, rgFiles, got[name].files);
        }
        count = rgFiles.length;
        if (i === 0) continue; // the warm-up run
        if (i <= coldRuns) {
          // A fresh server, one call of another tool first (the call path's own first-call costs), then find_files.
          const fresh = await startLatch(corpus);
          try {
            await fresh.call("stat_file", { path: "." });
            got.cold = await timedFind(fresh, glob);
            sameFiles(`find_files ${glob}, cold, run ${i}`, rgFiles, got.cold.files);
          } finally {
            await fresh.close();
          }
        }
        t.rg.push(rg.ms);
        t.rgCpu.push(peerCpu);
        for (const [name, g] of Object.entries(got)) {
          t[name].push(g.ms);
          t[`${name}Cpu`].push(g.cpu);
          t[`${name}RgCpu`].push(g.rgCpu);
        }
      }
      const rgMs = median(t.rg);
      const cell = (k: string) =>
        `${median(t[k]).toFixed(0)} (${(median(t[k]) / rgMs).toFixed(2)}×), CPU ${median(t[`${k}Cpu`]).toFixed(0)} + its rg ${median(t[`${k}RgCpu`]).toFixed(0)}`;
      rows.push(
        `| \`${glob}\` | ${count} | ${rgMs.toFixed(0)}, CPU ${median(t.rgCpu).toFixed(0)} | ${cell("latch")} | ${cell("cold")} |${before ? ` ${cell("before")} |` : ""}`,
      );
    }
  } finally {
    for (const s of Object.values(servers)) await s.close();
    load.stop();
  }
  const body = [
    measuredLine(
      `node --import tsx bench/browse/find-bench.ts --runs ${runs}${before ? " --before DIR" : ""}`,
      load,
      ` (after \`npm run build\`, at ${thisTree()}), ripgrep from @vscode/ripgrep`,
    ),
    noiseNote(load),
    "",
    `The corpus of bench/browse/corpus.ts (${corpus}). rg: \`rg --files ${PEER_RG_WALK.join(" ")} -g GLOB .\`, spawned. latch: one long-running \`latch mcp\` (SDK client, stdio), one find_files call per run, timed at the client; its CPU is the server's (all threads) during the call, from /proc, and its rg's (the children the server waited for, in 10 ms ticks; the peer's the same way). Median of ${runs} interleaved runs after a warm-up; every run's file set equals rg's. First call: in the first ${coldRuns} runs, a fresh \`latch mcp\` per run (one stat_file call, then find_files: the folder index empty, the whole tree walked; and its code not yet compiled by V8's optimising tiers, as in any first call); median of those.`,
    "",
    `| pattern | files | rg --files -g, ms, CPU ms | latch find_files, ms (÷ rg), server CPU ms + its rg's | the first call of a fresh server (same columns) |${before ? " the earlier build (same columns) |" : ""}`,
    `|---|---|---|---|---|${before ? "---|" : ""}`,
    ...rows,
    ...(before
      ? [
          "",
          `The earlier build: ${before}${beforeLabel ? ` (${beforeLabel})` : ""}, a \`git archive\` of that commit with \`npm run build\`, in the same runs.`,
        ]
      : []),
  ].join("\n");
  publish("find-files", "find_files against rg --files -g", body + "\n\n" + NOTES);
}

await main();
