// find_files `*.ts` and `*.md` on the generated corpus through a long-running `latch mcp` (MCP SDK
// client over stdio), against `rg --files -g GLOB` spawned with the same walk flags (issue 32: ≤ 1.5×).
// Runs interleave (rg, latch, and with --before an earlier build's server), so a busy moment falls on
// all alike; each latch call is timed at the client, round trip included, and the server's CPU per call
// is read from /proc (every thread's time on a CPU). The file sets are compared on every run.
//   npm run build && node --import tsx bench/browse/corpus.ts && node --import tsx bench/browse/find-bench.ts [--runs N] [--before DIR] [--no-write]
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
const GLOBS = ["*.ts", "*.md"];

function cpuMs(pid: number): number {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1e6;
}

async function timedFind(server: LatchServer, pattern: string): Promise<{ ms: number; cpu: number; files: string[] }> {
  const c0 = cpuMs(server.pid);
  const t0 = performance.now();
  const { result } = await server.call("find_files", { pattern });
  const ms = performance.now() - t0;
  if (result.truncated || result.count !== result.matches.length) throw new Error(`find_files ${pattern}: capped`);
  return { ms, cpu: cpuMs(server.pid) - c0, files: result.matches as string[] };
}

function sameFiles(what: string, a: string[], b: string[]): void {
  const sa = new Set(a);
  if (sa.size !== b.length || b.some((f) => !sa.has(f)))
    throw new Error(`${what}: the file sets differ (${a.length} vs ${b.length})`);
}

const NOTES = `**What changed** (issue 32): each name rg lists is checked with one lstat, through its folder's descriptor (\`BeneathLookup.isFile\`, src/browse/confirm.ts, which is the link check too), where the found-entry check made a second one by absolute path; and a folder is opened through its parent's descriptor, kept, not from the root again. test/tools/find-visibility.test.ts holds the answer (and the hidden count) to the same set as before and as the in-process walk, on a tree with gitignored, quarantined, always_deny, deny_paths, denied-substring, link and pipe entries at depth, and a folder swapped for a link after the listing.

**Where the time goes now** (CPU of one \`*.ts\` call in-process, machine at load ~30): the listing ~55 ms (spawning rg, reading its 50,100 names, decoding them, the glob), the check ~57 ms (the visibility rule on each match and folder, ~30 ms of lstat through /proc/self/fd for 8,910 files, the folder opens), the sort ~4 ms; then the pipeline's part (the disclosure gate's walk of the workspace, one lstat per folder, and its scan of the ~9,000-path answer; the log's hashes) and the MCP answer.

**Not done**, for ≤ 1.5× rg: rg filtering by the glob itself. With \`--debug\` on (how the hidden entries are counted without names), rg logs every entry a glob or a type leaves out, ~41,000 lines per call here, each in ~40 unbuffered writes; so rg still lists every name and the glob runs in latch.`;

async function main(): Promise<void> {
  const load = watchLoad();
  const servers: Record<string, LatchServer> = { latch: await startLatch(corpus) };
  if (before) servers.before = await startLatch(corpus, {}, { cli: path.join(before, "dist/cli/main.js") });
  const rows: string[] = [];
  try {
    for (const s of Object.values(servers)) await s.call("find_files", { pattern: "warm-up-nothing" });
    for (const glob of GLOBS) {
      const t: Record<string, number[]> = { rg: [], latch: [], before: [], latchCpu: [], beforeCpu: [] };
      let count = 0;
      for (let i = 0; i <= runs; i++) {
        const rg = await runTimed(corpus, rgPath, ["--files", ...PEER_RG_WALK, "-g", glob, "."]);
        const rgFiles = rg.out
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => l.replace(/^\.\//, ""));
        const got: Record<string, { ms: number; cpu: number; files: string[] }> = {};
        for (const [name, s] of Object.entries(servers)) {
          got[name] = await timedFind(s, glob);
          sameFiles(`find_files ${glob}, ${name}, run ${i}`, rgFiles, got[name].files);
        }
        count = rgFiles.length;
        if (i === 0) continue; // the warm-up run
        t.rg.push(rg.ms);
        for (const [name, g] of Object.entries(got)) {
          t[name].push(g.ms);
          t[`${name}Cpu`].push(g.cpu);
        }
      }
      const rgMs = median(t.rg);
      const cell = (k: string) =>
        `${median(t[k]).toFixed(0)} (${(median(t[k]) / rgMs).toFixed(2)}×), CPU ${median(t[`${k}Cpu`]).toFixed(0)}`;
      rows.push(
        `| \`${glob}\` | ${count} | ${rgMs.toFixed(0)} | ${cell("latch")} |${before ? ` ${cell("before")} |` : ""}`,
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
    `The corpus of bench/browse/corpus.ts (${corpus}). rg: \`rg --files ${PEER_RG_WALK.join(" ")} -g GLOB .\`, spawned. latch: one long-running \`latch mcp\` (SDK client, stdio), one find_files call per run, timed at the client; its CPU is the server's (all threads) during the call, from /proc. Median of ${runs} interleaved runs after a warm-up; every run's file set equals rg's.`,
    "",
    `| pattern | files | rg --files -g (ms) | latch find_files, ms (÷ rg), server CPU ms |${before ? " the earlier build (same columns) |" : ""}`,
    `|---|---|---|---|${before ? "---|" : ""}`,
    ...rows,
    ...(before
      ? ["", `The earlier build: ${before} (\`git archive\` of that commit, \`npm run build\`), in the same runs.`]
      : []),
  ].join("\n");
  publish("find-files", "find_files against rg --files -g", body + "\n\n" + NOTES);
}

await main();
