// apply_patch on a 100-file patch (against `git apply` of the same change as a unified diff), and
// read_many_files of 100 files against 100 read_file calls, both through host.call in one process.
// Run: node --import tsx bench/tools.ts [--no-write]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost } from "../src/host/create-host.js";
import { measuredLine, median, publish, watchLoad } from "./report.js";

const FILES = 100;
const LINES = 200;
const RUNS = 9;

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-bench-tools-")));
const root = path.join(base, "ws");
const load = watchLoad();

function content(i: number): string {
  return Array.from({ length: LINES }, (_, k) => `file ${i} line ${k} const value = ${k * 7};`).join("\n") + "\n";
}

function layOut(): string[] {
  rmSync(root, { recursive: true, force: true });
  const rels: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const rel = `src/m${i % 10}/f${i}.ts`;
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content(i));
    rels.push(rel);
  }
  return rels;
}

/** Three chunks per file, as Codex's format and as a unified diff. */
function patches(rels: string[]): { codex: string; unified: string } {
  const codex = ["*** Begin Patch"];
  const unified: string[] = [];
  rels.forEach((rel, i) => {
    codex.push(`*** Update File: ${rel}`);
    unified.push(`diff --git a/${rel} b/${rel}`, `--- a/${rel}`, `+++ b/${rel}`);
    for (const k of [20, 100, 180]) {
      const at = (n: number) => `file ${i} line ${n} const value = ${n * 7};`;
      codex.push("@@", ` ${at(k - 1)}`, `-${at(k)}`, `+${at(k)} // changed`, ` ${at(k + 1)}`);
      unified.push(`@@ -${k},3 +${k},3 @@`, ` ${at(k - 1)}`, `-${at(k)}`, `+${at(k)} // changed`, ` ${at(k + 1)}`);
    }
  });
  codex.push("*** End Patch");
  return { codex: codex.join("\n") + "\n", unified: unified.join("\n") + "\n" };
}

async function main(): Promise<void> {
  mkdirSync(root, { recursive: true });
  const host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    config: { toolsPolicies: { local_fs: { _max_output_bytes: "1048576" } }, agents: {} },
    env: { PATH: process.env.PATH ?? "", HOME: base },
  });
  const t = { codex: [] as number[], unified: [] as number[], git: [] as number[] };
  const reads = { many: [] as number[], single: [] as number[] };
  let session = 0;
  for (let r = 0; r < RUNS; r++) {
    for (const kind of ["codex", "unified", "git"] as const) {
      const rels = layOut();
      const p = patches(rels);
      const s = `s${session++}`;
      if (kind === "git") {
        writeFileSync(path.join(base, "u.diff"), p.unified);
        const t0 = performance.now();
        execFileSync("git", ["apply", path.join(base, "u.diff")], { cwd: root });
        t.git.push(performance.now() - t0);
        continue;
      }
      for (const rel of rels) await host.call("read_file", { path: rel }, { session: s });
      const t0 = performance.now();
      const out = await host.call("apply_patch", { patch: p[kind] }, { session: s });
      t[kind].push(performance.now() - t0);
      if (out.status !== "ok") throw new Error(JSON.stringify(out).slice(0, 300));
    }
    const rels = layOut();
    let s = `r${session++}`;
    let t0 = performance.now();
    const many = await host.call("read_many_files", { paths: rels }, { session: s });
    reads.many.push(performance.now() - t0);
    if (many.status !== "ok" || (many.result as { files: unknown[] }).files.length !== FILES)
      throw new Error("read_many_files did not read all 100 files whole");
    s = `r${session++}`;
    t0 = performance.now();
    for (const rel of rels) await host.call("read_file", { path: rel }, { session: s });
    reads.single.push(performance.now() - t0);
  }
  load.stop();
  host.close();
  rmSync(base, { recursive: true, force: true });
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const [c, u, g] = [median(t.codex), median(t.unified), median(t.git)];
  const [m, s1] = [median(reads.many), median(reads.single)];
  const body = [
    measuredLine("node --import tsx bench/tools.ts", load),
    "",
    `${FILES} files of ${LINES} lines, 3 chunks each (300 chunks); median of ${RUNS} runs; latch through host.call in-process (policy log, ledger, locks, approval diff not asked: auto_edit), files read in the session first (not timed).`,
    "",
    "| what | median | against |",
    "|---|---|---|",
    `| apply_patch, Codex format, 100 files | ${ms(c)} | \`git apply\` of the same change: ${ms(g)} (${(c / g).toFixed(2)}x) |`,
    `| apply_patch, unified diff, 100 files | ${ms(u)} | \`git apply\`: ${ms(g)} (${(u / g).toFixed(2)}x) |`,
    `| read_many_files, 100 files (one call) | ${ms(m)} | 100 read_file calls: ${ms(s1)} (${(s1 / m).toFixed(2)}x faster) |`,
    "",
    "apply_patch does more than git apply: per file a lock, a read-before-write check against the ledger, a staged temp file with fsync and a rename, a folder fsync, and the policy log's synced decision.",
  ].join("\n");
  publish("tools", "apply_patch and read_many_files", body);
}

await main();
