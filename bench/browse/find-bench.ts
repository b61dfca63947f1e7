// find_files `*.ts` and `*.md` on the generated corpus through a long-running `latch mcp` (MCP SDK
// client over stdio), against `rg --files -g GLOB` spawned with the same walk flags (issue 32: ≤ 1.5×).
// Runs interleave (rg, latch, and with --before an earlier build's server), so a busy moment falls on
// all alike; each latch call is timed at the client, round trip included, and the server's CPU per call
// is read from /proc (every thread's time on a CPU), and its rg's apart (the children it waited for,
// in 10 ms ticks), as the peer rg's. The file sets are compared on every run.
// Besides the long-running server (its folder index warm after the first call), it times the first
// find_files of fresh servers (the index empty: a whole walk) and a server under LATCH_GREP_ENGINE=rg.
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

const NOTES = `**What changed** (issue 32, point 4, branch find32): (1) a name \`rg --files\` listed is no longer looked up one by one where nothing on its way moved: a folder whose ctime, and every folder's above it up to the root (judged through descriptors, an lstat through the parent's), is older than 2 s before rg started is the folder rg read by name, and rg lists regular files only (checked against a real rg: no link, pipe or folder), so its listing there stands (\`BeneathLookup.listedFile\`, src/browse/confirm.ts; elsewhere, and off ext4/XFS/Btrfs/tmpfs/overlayfs/F2FS/ZFS, each name is looked up as before); (2) only names ending in the pattern's literal tail (".ts" of "*.ts") are cut out of rg's output, one search per chunk, instead of 50,100 strings and globs (src/browse/glob.ts \`literalTail\`); (3) rg lists on all cores but one (\`--threads\`, one here): its parallel listing funnels every name through one printer thread, ~95 ms of CPU with two threads, ~60 ms with one; (4) candidates are sorted before the check, so each folder is opened once; (5) \`inControlPlane\` tests the candidate for \`.\`/\`..\` segments once, not once per control-plane path. test/tools/find-visibility.test.ts tries the attacks on the steady path (a folder swapped for a link to outside and back while rg ran, a file swapped for a link, a folder above changed: each forces the lookup) and holds the answer and hidden count through the host on a tree older than the margin; test/browse/glob-tail.test.ts holds the tail to picomatch on odd glob syntax.

**Where the time goes now** (CPU of one \`*.ts\` call in-process through createHost, \`--cpu-prof\`, load ~20): find_files ~45 ms: spawning rg ~8 ms (libuv forks the whole server to start it), reading and cutting its names ~3 ms, the visibility rule on each of 8,910 names ~11 ms, the steady check ~15 ms at this load (one lstat per folder, 1,100 here), the sort ~4 ms; then the pipeline ~30 ms (the disclosure gate's scan of the answer ~14 ms and its walk for quarantined values, cached 1 s; the log's hashes of the answer; the run log's fdatasync on a timer, ~8 ms on the main thread), and GC ~25 ms over it all. rg itself: ~70 ms of CPU, against the peer's ~50: it lists all 50,100 names (the glob is applied in latch) and carries the rule's 44 exclusions.

**Not done**, for ≤ 1.5× rg: rg filtering by the glob itself. \`hidden\` counts every entry the visibility rule left out of the walk, whatever the pattern (as the in-process walk, grep and list_dir count it), and rg reports those only through \`--debug\`, which also logs every entry a glob or a type leaves out (~41,000 lines per call here, ~250 ms of rg's CPU); a second rg for the count would cost a spawn and ~60 ms of CPU more. Counting only hidden names that match the pattern would change the contract and still need every hidden folder (counted once, never entered), i.e. the whole walk. The flag is not free even without a pattern glob: rg listing the corpus on one thread with latch's arguments took 115–152 ms with \`--debug\` and 78–104 ms without it (medians of 7 spawns, three runs at 16:12, load ~1.5; \`spawnSync\` of the same argv in a throwaway script), a quarter to a third of find_files' wall time here; counting hidden entries without it needs a second walk (a second rg with the exclusions as positive globs lists hidden files but not empty hidden folders, and enters hidden folders).`;

async function main(): Promise<void> {
  const load = watchLoad();
  const servers: Record<string, LatchServer> = {
    latch: await startLatch(corpus),
    viaRg: await startLatch(corpus, { LATCH_GREP_ENGINE: "rg" }),
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
        coldViaRg: [],
        coldViaRgCpu: [],
        coldViaRgRgCpu: [],
        viaRg: [],
        viaRgCpu: [],
        viaRgRgCpu: [],
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
          // Fresh servers, one call of another tool first (the call path's own first-call costs), then find_files.
          for (const [name, env] of [
            ["cold", {}],
            ["coldViaRg", { LATCH_GREP_ENGINE: "rg" }],
          ] as const) {
            const fresh = await startLatch(corpus, env);
            try {
              await fresh.call("stat_file", { path: "." });
              got[name] = await timedFind(fresh, glob);
              sameFiles(`find_files ${glob}, ${name}, run ${i}`, rgFiles, got[name].files);
            } finally {
              await fresh.close();
            }
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
        `| \`${glob}\` | ${count} | ${rgMs.toFixed(0)}, CPU ${median(t.rgCpu).toFixed(0)} | ${cell("latch")} | ${cell("viaRg")} | ${cell("cold")} | ${cell("coldViaRg")} |${before ? ` ${cell("before")} |` : ""}`,
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
    `The corpus of bench/browse/corpus.ts (${corpus}). rg: \`rg --files ${PEER_RG_WALK.join(" ")} -g GLOB .\`, spawned. latch: one long-running \`latch mcp\` (SDK client, stdio), one find_files call per run, timed at the client; its CPU is the server's (all threads) during the call, from /proc, and its rg's (the children the server waited for, in 10 ms ticks; the peer's the same way). Median of ${runs} interleaved runs after a warm-up; every run's file set equals rg's. Under LATCH_GREP_ENGINE=rg: a second long-running server taking its candidates from \`rg --files\` (the path before the folder index). First call: in the first ${coldRuns} runs, a fresh \`latch mcp\` of each kind per run (one stat_file call, then find_files: the folder index empty, the whole tree walked; and its code not yet compiled by V8's optimising tiers, as in any first call); median of those.`,
    "",
    `| pattern | files | rg --files -g, ms, CPU ms | latch find_files, ms (÷ rg), server CPU ms + its rg's | under LATCH_GREP_ENGINE=rg (same columns) | the first call of a fresh server (same columns) | the same under LATCH_GREP_ENGINE=rg |${before ? " the earlier build (same columns) |" : ""}`,
    `|---|---|---|---|---|---|---|${before ? "---|" : ""}`,
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
