// What an undo costs (issue 33), against the shadow-git restore that other agents' checkpoints use.
// 1. One file restored: FILES files of 4 KiB, each edited by its own edit_file call; then, file by
//    file and taking turns, latch undoes the even ones (`host.call("undo", {call_id})`, the whole call
//    path: policy, log, locks, the check against the current bytes, an atomic write) and git restores
//    the odd ones from a checkpoint commit (`git checkout CHECKPOINT -- FILE`, one process each, as a
//    shadow-git checkpoint restores a file). Wall time per file, p50 and p99.
// 2. A 100-file apply_patch undone in one call: the time per file restored.
// 3. The tree diff of a contained workspace-write run (src/sandbox/tree-diff.ts: a stat walk before
//    and after), on trees of 10 000 and 40 000 files, against `git status` over the same tree.
// Usage: node --import tsx bench/undo.ts [--files N] [--no-write]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost } from "../src/host/create-host.js";
import { ShellWrites } from "../src/sandbox/tree-diff.js";
import { measuredLine, median, noiseNote, percentile, publish, watchLoad } from "./report.js";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const FILES = arg("--files", 300);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: os.tmpdir() };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], { cwd, env: GIT_ENV });
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const text = (i: number) =>
  Array.from({ length: 64 }, (_, l) => `line ${l} of file ${i} `.padEnd(63, ".")).join("\n") + "\n";

async function restores(base: string) {
  const root = path.join(base, "ws");
  mkdirSync(path.join(root, "src"), { recursive: true });
  for (let i = 0; i < FILES; i++) writeFileSync(path.join(root, `src/f${i}.txt`), text(i));
  git(root, "init", "-q");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "checkpoint");
  const host = await createHost({
    root,
    stateDir: path.join(base, "state"),
    config: { toolsPolicies: {}, agents: {} },
    env: { PATH: process.env.PATH ?? "", HOME: base },
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < FILES; i++) {
      const p = `src/f${i}.txt`;
      await host.call("read_file", { path: p });
      const r: any = await host.call("edit_file", { path: p, old_string: "line 7 ", new_string: "LINE 7 " });
      if (r.status !== "ok") throw new Error(JSON.stringify(r));
      ids.push(r.result.call_id);
    }
    const latch: number[] = [];
    const peer: number[] = [];
    for (let i = 0; i < FILES; i++) {
      const t0 = process.hrtime.bigint();
      if (i % 2 === 0) {
        const r = await host.call("undo", { call_id: ids[i] });
        if (r.status !== "ok") throw new Error(JSON.stringify(r));
        latch.push(ms(t0));
      } else {
        git(root, "checkout", "HEAD", "--", `src/f${i}.txt`);
        peer.push(ms(t0));
      }
    }
    if (git(root, "status", "--porcelain").toString() !== "") throw new Error("not every file was restored");
    // One apply_patch over 100 files, undone in one call.
    const n = Math.min(100, FILES);
    for (let i = 0; i < n; i++) await host.call("read_file", { path: `src/f${i}.txt` });
    const patch = ["*** Begin Patch"];
    for (let i = 0; i < n; i++)
      patch.push(`*** Update File: src/f${i}.txt`, "@@", "-" + text(i).split("\n")[3], "+changed");
    patch.push("*** End Patch");
    const p: any = await host.call("apply_patch", { patch: patch.join("\n") });
    if (p.status !== "ok") throw new Error(JSON.stringify(p));
    const t0 = process.hrtime.bigint();
    const u = await host.call("undo", { call_id: p.result.call_id });
    const batch = ms(t0) / n;
    if (u.status !== "ok") throw new Error(JSON.stringify(u));
    return { latch, peer, batch, n };
  } finally {
    host.close();
  }
}

function treeDiff(base: string, count: number) {
  const root = path.join(base, `tree${count}`);
  for (let d = 0; d < count / 100; d++) {
    mkdirSync(path.join(root, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(path.join(root, `d${d}/f${f}.txt`), "x\n");
  }
  git(root, "init", "-q");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "tree");
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let k = 0; k < 3; k++) {
    let t0 = process.hrtime.bigint();
    const w = ShellWrites.start(root);
    writeFileSync(path.join(root, "d0/f0.txt"), `changed ${k}\n`);
    const rep = w.report();
    ours.push(ms(t0));
    if (rep.count !== 1) throw new Error(`tree diff found ${rep.count} changes`);
    t0 = process.hrtime.bigint();
    git(root, "status", "--porcelain");
    theirs.push(ms(t0));
  }
  return { count, ours: median(ours), theirs: median(theirs) };
}

const load = watchLoad();
const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-bench-undo-")));
try {
  const r = await restores(base);
  const trees = [10_000, 40_000].map((c) => treeDiff(base, c));
  load.stop();
  const f = (x: number) => x.toFixed(2);
  const body = [
    measuredLine(`node --import tsx bench/undo.ts --files ${FILES}`, load),
    noiseNote(load),
    "",
    `${FILES} files of 4 KiB, each changed by its own edit_file call; then, taking turns file by file, latch undoes the even ones (one \`undo\` call each, the whole call path: policy, log decision fdatasynced, locks, the check against the current bytes, the synced pre-image of the undo itself, an atomic write) and git restores the odd ones from a checkpoint commit (\`git checkout HEAD -- FILE\`, one process each, as shadow-git checkpoints do).`,
    "",
    "| one file restored | latch undo | git checkout | latch ÷ git |",
    "|---|---|---|---|",
    `| p50 (ms) | ${f(median(r.latch))} | ${f(median(r.peer))} | ${f(median(r.latch) / median(r.peer))} (lower is better) |`,
    `| p99 (ms) | ${f(percentile(r.latch, 99))} | ${f(percentile(r.peer, 99))} | |`,
    "",
    `An apply_patch over ${r.n} files, undone in one call: ${f(r.batch)} ms per file restored.`,
    "",
    "The tree diff of a contained workspace-write run (src/sandbox/tree-diff.ts: an lstat walk before and after the run, no content read), against `git status --porcelain` over the same committed tree, median of 3:",
    "",
    "| files in the tree | tree diff (ms) | git status (ms) | ratio |",
    "|---|---|---|---|",
    ...trees.map((t) => `| ${t.count} | ${f(t.ours)} | ${f(t.theirs)} | ${f(t.ours / t.theirs)} |`),
    "",
    "Past 50 000 entries the tree diff stops and the result says the changed files are not listed.",
  ].join("\n");
  publish("undo", "undo: restoring a file, and the tree diff of shell writes", body);
} finally {
  rmSync(base, { recursive: true, force: true });
}
