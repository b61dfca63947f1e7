// An A/B of two builds of latch's grep over MCP, each against rg, interleaved in one process: the
// way to check a change to the grep path on a shared machine, where single figures drift with the
// load but ratios to rg measured side by side hold. Build the "before" tree somewhere (a worktree at
// the old commit, `npm run build`), then:
//   npm run build && node --import tsx bench/browse/grep-ab.ts --before OLD/dist/cli/main.js [--runs N]
// Prints per search the median ms of rg, before and after, the median of the per-run ratios, and the
// server's CPU time per call (its own threads, not rg's: from /proc/PID/stat, Linux only).
// The match sets of before and after must equal rg's, or the run fails.
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { median } from "../report.js";
import { NEEDLES, PEER_RG_WALK } from "./corpus.js";
import { CLI, startLatch, type LatchServer } from "./latch-mcp.js";
import { lineSet, runTimed } from "./peers.js";

const argv = process.argv.slice(2);
const opt = (name: string, fallback?: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const corpus = path.resolve(opt("--corpus", "/tmp/latch-bench-corpus")!);
const runs = Number(opt("--runs", "7"));
const before = opt("--before");
if (!before) throw new Error("Expected --before PATH/dist/cli/main.js (the build to compare against), got nothing.");

const rg = (args: string[]) => runTimed(corpus, rgPath, args);
const listed = (text: string) => [...lineSet(text)].sort();

const SEARCHES = [
  { name: "literal", args: { pattern: NEEDLES.literal }, rg: ["-F", "-e", NEEDLES.literal] },
  { name: "regex", args: { pattern: NEEDLES.regex, regex: true }, rg: ["-e", NEEDLES.regex] },
  {
    name: "case-insensitive",
    args: { pattern: NEEDLES.caseInsensitive, case_sensitive: false },
    rg: ["-F", "-i", "-e", NEEDLES.caseInsensitive],
  },
];

/** The server's own CPU time (all its threads), in ms, from /proc: less swayed by the load than wall time. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

async function timed(
  server: LatchServer,
  args: Record<string, unknown>,
): Promise<{ ms: number; cpu: number; lines: string[] }> {
  const c0 = cpuMs(server.pid);
  const t0 = performance.now();
  const { result } = await server.call("grep", args);
  return { ms: performance.now() - t0, cpu: cpuMs(server.pid) - c0, lines: listed(String(result.results)) };
}

const a = await startLatch(corpus, {}, { cli: path.resolve(before) });
const b = await startLatch(corpus, {}, { cli: CLI });
try {
  for (const s of SEARCHES) {
    const t = { rg: [] as number[], before: [] as number[], after: [] as number[] };
    const cpu = { before: 0, after: 0 };
    const ratio = { before: [] as number[], after: [] as number[] };
    for (let i = 0; i < runs; i++) {
      // Alternate which build goes first, so neither always follows rg's warm-up of the same files.
      const r = await rg(["-n", "--no-heading", ...PEER_RG_WALK, ...s.rg, "."]);
      const first = i % 2 === 0 ? await timed(a, s.args) : await timed(b, s.args);
      const second = i % 2 === 0 ? await timed(b, s.args) : await timed(a, s.args);
      const [x, y] = i % 2 === 0 ? [first, second] : [second, first];
      const want = listed(r.out).join("\n");
      if (x.lines.join("\n") !== want || y.lines.join("\n") !== want)
        throw new Error(
          `${s.name}: before (${x.lines.length}) or after (${y.lines.length}) differs from rg's ${want.split("\n").length} lines`,
        );
      t.rg.push(r.ms);
      t.before.push(x.ms);
      t.after.push(y.ms);
      cpu.before += x.cpu;
      cpu.after += y.cpu;
      ratio.before.push(x.ms / r.ms);
      ratio.after.push(y.ms / r.ms);
    }
    console.log(
      `${s.name.padEnd(17)} rg ${median(t.rg).toFixed(0)} ms · before ${median(t.before).toFixed(0)} ms (${median(ratio.before).toFixed(2)}×) · after ${median(t.after).toFixed(0)} ms (${median(ratio.after).toFixed(2)}×) · server CPU per call before ${(cpu.before / runs).toFixed(0)} ms, after ${(cpu.after / runs).toFixed(0)} ms · ${runs} runs, load ${os.loadavg()[0].toFixed(1)}`,
    );
  }
} finally {
  await a.close();
  await b.close();
}
