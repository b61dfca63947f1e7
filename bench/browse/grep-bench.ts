// grep and find_files through an in-process host (host.call, as `latch mcp` serves them) against rg,
// GNU grep and find, on the generated corpus. Median of N runs, ratios to rg, match sets compared.
//   node --import tsx bench/browse/grep-bench.ts [--corpus DIR] [--runs N]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { createHost, type Host } from "../../src/host/create-host.js";
import { buildCorpus, NEEDLES } from "./corpus.js";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const corpus = path.resolve(opt("--corpus", "/tmp/latch-bench-corpus"));
const runs = Number(opt("--runs", "5"));

function run(cmd: string, args: string[]): Promise<{ ms: number; out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd: corpus, stdio: ["ignore", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, out: Buffer.concat(chunks).toString("utf8") }));
  });
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = process.hrtime.bigint();
  const value = await f();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `path:N:...` lines (rg, grep) or `path:N: ...` (latch) as a set of "path:N". */
function lineSet(text: string): Set<string> {
  const s = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^(?:\.\/)?([^:]+):(\d+):/.exec(line);
    if (m) s.add(`${m[1]}:${m[2]}`);
  }
  return s;
}

function fileSet(text: string | string[]): Set<string> {
  const lines = Array.isArray(text) ? text : text.split("\n");
  return new Set(lines.filter((l) => l !== "").map((l) => l.replace(/^\.\//, "")));
}

const same = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

async function latchCall(host: Host, tool: string, args: unknown): Promise<any> {
  const r = await host.call(tool, args);
  if (r.status !== "ok") throw new Error(`${tool}: ${JSON.stringify(r).slice(0, 300)}`);
  return r.result;
}

async function main() {
  if (!existsSync(path.join(corpus, "mod000"))) {
    console.error(`building the corpus in ${corpus} …`);
    buildCorpus(corpus);
  }
  const state = mkdtempSync(path.join(os.tmpdir(), "latch-bench-state-"));
  const config = { toolsPolicies: { local_fs: { _max_grep_matches: "10000000", _max_output_bytes: "500000000", _max_find_results: "10000000" } }, agents: {} };
  const hostRg = await createHost({ root: corpus, stateDir: state, config, env: { LATCH_GREP_ENGINE: "rg" } });
  const hostJs = await createHost({ root: corpus, stateDir: state, config, env: { LATCH_GREP_ENGINE: "js" } });
  const rgCommon = ["-n", "--no-heading", "--no-config", "--hidden", "--no-require-git", "-g", "!.git", "-g", "!node_modules"];
  const grepCommon = ["-rnI", "--exclude-dir=.git", "--exclude-dir=node_modules", "--exclude-dir=generated", "--exclude=*.tmp"];
  const searches = [
    { name: "literal", args: { pattern: NEEDLES.literal }, rg: ["-F", "-e", NEEDLES.literal], grep: ["-F", "-e", NEEDLES.literal] },
    { name: "regex", args: { pattern: NEEDLES.regex, regex: true }, rg: ["-e", NEEDLES.regex], grep: ["-E", "-e", NEEDLES.regex] },
    { name: "case-insensitive", args: { pattern: NEEDLES.caseInsensitive, case_sensitive: false }, rg: ["-F", "-i", "-e", NEEDLES.caseInsensitive], grep: ["-F", "-i", "-e", NEEDLES.caseInsensitive] },
  ];
  const rows: string[] = [];
  // Warm the page cache once, so every contender reads from memory.
  await run(rgPath, [...rgCommon, "-c", "-F", "-e", "warm-up-nothing", "."]);
  for (const s of searches) {
    const t: Record<string, number[]> = { rg: [], grep: [], latch: [], latchJs: [] };
    const sets: Record<string, Set<string>> = {};
    for (let i = 0; i < runs; i++) {
      const a = await run(rgPath, [...rgCommon, ...s.rg, "."]);
      t.rg.push(a.ms);
      const b = await run("grep", [...grepCommon, ...s.grep, "."]);
      t.grep.push(b.ms);
      const c = await timed(() => latchCall(hostRg, "grep", s.args));
      t.latch.push(c.ms);
      const d = await timed(() => latchCall(hostJs, "grep", s.args));
      t.latchJs.push(d.ms);
      if (i === 0) {
        sets.rg = lineSet(a.out);
        sets.grep = lineSet(b.out);
        sets.latch = lineSet(c.value.results);
        sets.latchJs = lineSet(d.value.results);
        if (c.value.total_matches !== sets.latch.size) throw new Error(`latch ${s.name}: ${c.value.total_matches} matches but ${sets.latch.size} listed`);
      }
    }
    const rg = median(t.rg);
    const identical = same(sets.rg, sets.grep) && same(sets.rg, sets.latch) && same(sets.rg, sets.latchJs);
    rows.push(
      `| grep ${s.name} | ${sets.rg.size} | ${rg.toFixed(0)} | ${median(t.grep).toFixed(0)} (${(median(t.grep) / rg).toFixed(2)}×) | ${median(t.latch).toFixed(0)} (${(median(t.latch) / rg).toFixed(2)}×) | ${median(t.latchJs).toFixed(0)} (${(median(t.latchJs) / rg).toFixed(2)}×) | ${identical ? "yes" : `NO: rg ${sets.rg.size}, grep ${sets.grep.size}, latch ${sets.latch.size}, latch-js ${sets.latchJs.size}`} |`,
    );
    console.error(rows[rows.length - 1]);
  }
  for (const glob of ["*.ts", "*.md"]) {
    const t: Record<string, number[]> = { rg: [], find: [], latch: [] };
    const sets: Record<string, Set<string>> = {};
    for (let i = 0; i < runs; i++) {
      const a = await run(rgPath, ["--files", "--no-config", "--hidden", "--no-require-git", "-g", "!.git", "-g", "!node_modules", "-g", glob, "."]);
      t.rg.push(a.ms);
      const b = await run("find", [".", "-type", "f", "-name", glob, "-not", "-path", "*/.git/*", "-not", "-path", "*/node_modules/*"]);
      t.find.push(b.ms);
      const c = await timed(() => latchCall(hostRg, "find_files", { pattern: glob }));
      t.latch.push(c.ms);
      if (i === 0) {
        sets.rg = fileSet(a.out);
        sets.find = fileSet(b.out);
        sets.latch = fileSet(c.value.matches);
      }
    }
    const rg = median(t.rg);
    const identical = same(sets.rg, sets.find) && same(sets.rg, sets.latch);
    rows.push(
      `| find_files ${glob} | ${sets.rg.size} | ${rg.toFixed(0)} | ${median(t.find).toFixed(0)} (${(median(t.find) / rg).toFixed(2)}×) find | ${median(t.latch).toFixed(0)} (${(median(t.latch) / rg).toFixed(2)}×) | — | ${identical ? "yes" : `NO: rg ${sets.rg.size}, find ${sets.find.size}, latch ${sets.latch.size}`} |`,
    );
    console.error(rows[rows.length - 1]);
  }
  hostRg.close();
  hostJs.close();
  rmSync(state, { recursive: true, force: true });
  console.log(`Median of ${runs} runs, wall ms; ratios to rg. ${os.cpus().length} CPUs, node ${process.version}.\n`);
  console.log("| search | matches | rg | GNU grep / find | latch (rg engine) | latch (JS engine) | same match set |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(r);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
