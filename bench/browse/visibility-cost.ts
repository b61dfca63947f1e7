// What the one visibility rule (src/policy/visibility.ts) costs grep's rg engine, as an A/B in one run,
// interleaved: rg with latch's argv without the rule's exclusions, and with them (the quarantine's
// globs, the envelope's), on the browse corpus; then `hides` itself, timed over every entry of the
// corpus (what the in-process walks add per entry: grep's JS engine, and find_files, which only walks).
//   node --import tsx bench/browse/visibility-cost.ts [--corpus DIR] [--runs N]
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { allDefinitions, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { visibilityRule } from "../../src/policy/visibility.js";
import { excludeArgs, RG_WALK_FLAGS } from "../../src/browse/grep-rg.js";
import { median, watchLoad } from "../report.js";
import { NEEDLES } from "./corpus.js";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const corpus = path.resolve(opt("--corpus", "/tmp/latch-bench-corpus"));
const runs = Number(opt("--runs", "7"));

function time(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(rgPath, args, { cwd: corpus, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", () => resolve(performance.now() - t0));
  });
}

async function main() {
  const load = watchLoad();
  const rule = visibilityRule({
    root: corpus,
    controlPlane: [],
    deniedSubstrings: [],
    envelope: resolveEnvelope("auto_edit", allDefinitions({})),
    tool: "grep",
  });
  const rg = rule.rgExcludes(".")!;
  const cases: [string, string[]][] = [
    [
      "grep literal",
      ["--json", "--binary", ...RG_WALK_FLAGS, "--fixed-strings", "--regexp", NEEDLES.literal, "--", "./"],
    ],
    ["grep regex", ["--json", "--binary", ...RG_WALK_FLAGS, "--regexp", NEEDLES.regex, "--", "./"]],
  ];
  const rows: string[] = [];
  for (const [name, base] of cases) {
    const withRule = [...base.slice(0, -2), ...excludeArgs(rg), ...base.slice(-2)];
    const a: number[] = [];
    const b: number[] = [];
    await time(base); // warm
    for (let i = 0; i < runs; i++) {
      a.push(await time(base));
      b.push(await time(withRule));
    }
    rows.push(
      `| ${name} | ${median(a).toFixed(0)} | ${median(b).toFixed(0)} | ${(median(b) / median(a)).toFixed(2)}× |`,
    );
    console.error(rows[rows.length - 1]);
  }
  // The walk's side: `hides` on every entry of the corpus.
  const rels = readdirSync(corpus, { recursive: true, encoding: "utf8" });
  const t0 = performance.now();
  let hidden = 0;
  for (const rel of rels) if (rule.hides(rel, false) !== undefined) hidden++;
  const perEntryUs = ((performance.now() - t0) * 1000) / rels.length;
  load.stop();
  console.log(
    [
      `rg with latch's argv, without and with the visibility rule's ${rg.length} exclusions, ${runs} runs interleaved, median ms; load ${load.range()}:`,
      "",
      "| search | without the rule | with the rule | ratio |",
      "|---|---|---|---|",
      ...rows,
      "",
      `\`hides\` on each of the corpus's ${rels.length} entries: ${perEntryUs.toFixed(2)} µs per entry (${hidden} hidden).`,
    ].join("\n"),
  );
}

await main();
