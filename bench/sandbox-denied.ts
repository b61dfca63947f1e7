// What masking the envelope's denied paths costs (issue 28, point 5): the walk that finds the
// workspace's secrets (scanWorkspace) now also tests each entry against the envelope's always_deny
// and deny_paths globs. On a generated tree (default 2,000 folders, 20,000 files, one `private/`
// folder in every 100th), the walk with two rules against the same walk with none, cold (every
// listing read) and warm (kept listings: one lstat per folder), in one run; then contained `echo hi`
// through host.call with and without the rules, interleaved so load hits both alike.
//   node --import tsx bench/sandbox-denied.ts [--folders N] [--calls N] [--no-write]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost, type Host } from "../src/host/create-host.js";
import { scanWorkspace } from "../src/sandbox/secrets.js";
import { containedEchoTimes, measuredLine, noiseNote, percentile, publish, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const opt = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const FOLDERS = Number(opt("--folders") ?? 2000);
const CALLS = Number(opt("--calls") ?? 40);
const RULES = ["**/private/**", "**/notes/*.log"];

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-denied-"));
const root = path.join(tmp, "ws");
for (let d = 0; d < FOLDERS; d++) {
  const dir = path.join(root, `m${d % 40}`, `d${d}`);
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < 10; f++) writeFileSync(path.join(dir, `f${f}.txt`), "x\n");
  if (d % 100 === 0) {
    mkdirSync(path.join(dir, "private"));
    writeFileSync(path.join(dir, "private", "p.txt"), "hidden\n");
  }
}

const walk: string[] = [];
const found: Record<string, number> = {};
for (const [name, rules] of [
  ["no rules", []],
  ["two rules", RULES],
] as const) {
  let t = performance.now();
  const scan = scanWorkspace(root, rules);
  const cold = performance.now() - t;
  found[name] = scan.denied.length;
  const warm: number[] = [];
  for (let i = 0; i < 100; i++) {
    t = performance.now();
    scanWorkspace(root, rules);
    warm.push(performance.now() - t);
  }
  walk.push(
    `| ${name} | ${scan.denied.length} | ${cold.toFixed(1)} | ${percentile(warm, 50).toFixed(2)} | ${percentile(warm, 99).toFixed(2)} |`,
  );
}
if (found["two rules"] !== Math.ceil(FOLDERS / 100))
  throw new Error(`expected every private/ found: ${found["two rules"]}`);

async function host(name: string, rules: readonly string[]): Promise<Host> {
  return createHost({
    root,
    stateDir: path.join(tmp, `state-${name}`),
    envelope: "bench",
    config: {
      toolsPolicies: { local_shell: { _containment: "required" } },
      agents: {},
      envelopes: {
        bench: {
          extends: "default",
          shell: { grant: "approve", prefix_allowlist: ["echo"] },
          always_deny: rules.map((r) => ({ tool: "*", when_path: r })),
        },
      },
    },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp },
  });
}

const load = watchLoad();
const hosts = { "no rules": await host("none", []), "two rules": await host("two", RULES) };
const times = await containedEchoTimes(hosts, CALLS, 3);
load.stop();
for (const h of Object.values(hosts)) h.close();
rmSync(tmp, { recursive: true, force: true });

const f = (x: number) => x.toFixed(1);
const [none, two] = [times["no rules"], times["two rules"]];
const body = [
  measuredLine(`node --import tsx bench/sandbox-denied.ts --folders ${FOLDERS} --calls ${CALLS}`, load),
  "",
  `A generated tree of ${FOLDERS} folders and ${FOLDERS * 10} files, a \`private/\` folder in every 100th. Rules: ${RULES.map((r) => `\`${r}\``).join(", ")} (always_deny).`,
  "",
  "The walk alone (`scanWorkspace`), in this process:",
  "",
  "| rules | denied paths found | cold ms | warm p50 ms | warm p99 ms |",
  "|---|---|---|---|---|",
  ...walk,
  "",
  `Contained \`echo hi\` through \`host.call("local_shell")\`, ${CALLS} calls each, interleaved:`,
  "",
  "| measure | no rules | two rules | two ÷ none |",
  "|---|---|---|---|",
  `| p50 ms | ${f(percentile(none, 50))} | ${f(percentile(two, 50))} | ${(percentile(two, 50) / percentile(none, 50)).toFixed(2)} |`,
  `| p99 ms | ${f(percentile(none, 99))} | ${f(percentile(two, 99))} | ${(percentile(two, 99) / percentile(none, 99)).toFixed(2)} |`,
  "",
  `${noiseNote(load)} The rules run only when a folder's listing is read (the cold walk: every entry tested against each glob, by its absolute and its relative path, once per changed folder); a warm walk is one lstat per folder with or without rules. One cold walk each, in this order, is a single sample: read it as an order of magnitude.`,
].join("\n");
publish("sandbox-denied", "Denied paths masked in the box: their cost (bench/sandbox-denied.ts)", body);
