// The disclosure gate (issue 29): the scanner's throughput on mixed source text, and its false
// positives over this repository's own node_modules read through read_file.
//   throughput: every .ts/.js/.json/.md file of node_modules (up to --mb MiB), joined into strings of
//   64 KiB, scanned by scanText on this thread with 6 known values (each in its 8 forms) and every
//   format rule: MB/s on one core.
//   false positives: up to --files files of node_modules (text, ≤ 256 KiB) read whole through
//   host.call("read_file") of a host rooted there; the share that got a redaction, and the rules.
// Usage: node --import tsx bench/disclose.ts [--mb 64] [--files 5000]
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { randomBytes } from "node:crypto";
import { createHost } from "../src/host/create-host.js";
import { knownNeedles } from "../src/disclose/known.js";
import { scanText } from "../src/disclose/scan.js";
import { FORMAT_RULES } from "../src/disclose/rules.js";
import { measuredLine, publish, REPO, watchLoad } from "./report.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const MB = arg("mb", 64);
const FILES = arg("files", 5000);
const NM = path.join(REPO, "node_modules");

function* walk(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile() && /\.(ts|js|mjs|cjs|json|md)$/.test(e.name)) yield p;
  }
}

const load = watchLoad();
// 1. throughput
const chunks: string[] = [];
let total = 0;
let pending = "";
for (const f of walk(NM)) {
  if (total >= MB * 1024 * 1024) break;
  const st = statSync(f);
  if (st.size > 1 << 20) continue;
  pending += readFileSync(f, "utf8");
  while (pending.length >= 64 * 1024) {
    chunks.push(pending.slice(0, 64 * 1024));
    total += 64 * 1024;
    pending = pending.slice(64 * 1024);
  }
}
const env: Record<string, string> = {};
for (let i = 0; i < 6; i++) env[`BENCH_${i}_TOKEN`] = randomBytes(16).toString("hex");
const d = { needles: knownNeedles(env), rules: FORMAT_RULES };
let bytes = 0;
let findings = 0;
// Warm up, the maintained preset's lazy load included (once per process: secretlint.ts).
await scanText("postgres://app:warmup-pw-123@db.internal/x", d);
for (const c of chunks.slice(0, 64)) findings += (await scanText(c, d)).length;
const t0 = performance.now();
for (const c of chunks) {
  findings += (await scanText(c, d)).length;
  bytes += Buffer.byteLength(c);
}
const secs = (performance.now() - t0) / 1000;
const mbps = bytes / 1e6 / secs;

// 2. false positives through read_file
const state = mkdtempSync(path.join(os.tmpdir(), "latch-bench-disclose-"));
const host = await createHost({
  root: NM,
  stateDir: state,
  config: { toolsPolicies: {}, agents: {} },
  env: { PATH: process.env.PATH ?? "" },
});
let read = 0;
let redacted = 0;
const rules = new Map<string, number>();
const hits: string[] = [];
for (const f of walk(NM)) {
  if (read >= FILES) break;
  if (statSync(f).size > 256 * 1024) continue;
  const r = await host.call("read_file", { path: path.relative(NM, f), force: true });
  if (r.status !== "ok") continue;
  read++;
  if (r.disclosure) {
    redacted++;
    hits.push(path.relative(NM, f));
    for (const x of r.disclosure.findings) rules.set(x.rule, (rules.get(x.rule) ?? 0) + 1);
  }
}
host.close();
rmSync(state, { recursive: true, force: true });
load.stop();

const share = (100 * redacted) / read;
const body = [
  measuredLine(`node --import tsx bench/disclose.ts --mb ${MB} --files ${FILES}`, load),
  "",
  "| measure | value |",
  "|---|---|",
  `| scanText throughput, one core, ${(bytes / 1e6).toFixed(1)} MB of node_modules source in 64 KiB strings, 6 known values + ${FORMAT_RULES.length} rules | ${mbps.toFixed(0)} MB/s |`,
  `| findings in that text | ${findings} |`,
  `| files of node_modules read through read_file | ${read} |`,
  `| files that got a redaction | ${redacted} (${share.toFixed(2)}%; budget ≤ 0.5%) |`,
  `| rules that fired (files) | ${[...rules].map(([k, v]) => `${k} ${v}`).join(", ") || "none"} |`,
  "",
  hits.length
    ? `The files: ${hits
        .slice(0, 20)
        .map((h) => `\`${h}\``)
        .join(", ")}${hits.length > 20 ? " …" : ""}.`
    : "",
].join("\n");
console.log(body);
publish("disclose", "The disclosure gate: scanner throughput and false positives (bench/disclose.ts)", body);
