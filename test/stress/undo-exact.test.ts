// Undo exactness: random sequences of edit_file, write_file, sed, apply_patch, move_file and
// delete_file calls, with changes by "someone else" (plain fs writes) and undos (of one call, or of a
// session's writes since one) interleaved. Each write's effect is recorded from the disk itself (a
// snapshot of the sequence's folder before and after), not from latch's store; each undo is then
// checked against what those snapshots say it must do: put back the exact bytes, or be refused
// because a file changed since. The count of sequences comes from LATCH_UNDO_SEQS, else 1000 under
// LATCH_STRESS=1 and 25 in `npm test`. Storage is checked too: what the undo tables take in latch.db
// (SQLite's dbstat) stays within the bytes the writes replaced plus a fixed overhead per call.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import { PreImages } from "../../src/fs/preimages.js";
import { sha256 } from "../../src/fs/text.js";
import { makeFixture } from "../helpers/fixture.js";
import { rng } from "../helpers/rng.js";

const SEQS = Number(process.env.LATCH_UNDO_SEQS ?? (process.env.LATCH_STRESS === "1" ? 1000 : 25));
const KILLS = Number(process.env.LATCH_UNDO_KILLS ?? (process.env.LATCH_STRESS === "1" ? 100 : 4));
const LOOP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/undo-loop.mjs");
const STEPS = 14;
/** Bytes of latch.db's undo tables and indexes allowed per call beyond the contents kept (rows, b-tree pages). */
const PER_CALL_OVERHEAD = 1024;
/**
 * Plus the workspace root's own bytes, which the store keeps in full in each call's row and its index
 * entry (2) and in each blob's row, key and age index (3): a clone under a ~300-character path
 * takes ~1.5 KiB more per call, whatever the writes.
 */
const ROOT_COPIES = { perCall: 2, perBlob: 3 };
/** And once: the tables' and indexes' first pages (eight b-trees of 4 KiB pages, with room to split). */
const FIXED_OVERHEAD = 64 * 1024;

type Tree = Map<string, Buffer>;
interface Recorded {
  id: string;
  before: Tree;
  after: Tree;
}

function snapshot(dir: string): Tree {
  const out: Tree = new Map();
  for (const rel of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const abs = path.join(dir, rel);
    if (statSync(abs).isFile()) out.set(rel.split(path.sep).join("/"), readFileSync(abs));
  }
  return out;
}

const same = (a: Buffer | undefined, b: Buffer | undefined) =>
  a === undefined ? b === undefined : b !== undefined && a.equals(b);

/** The files a recorded call changed. */
function touched(c: Recorded): string[] {
  return [...new Set([...c.before.keys(), ...c.after.keys()])].filter((f) => !same(c.before.get(f), c.after.get(f)));
}

/**
 * What undoing `range` (newest first) must do, from the snapshots alone: per file, walk back from its
 * current content; a file that holds what a call left goes back to what the call found, one that
 * already holds that stays; anything else changed since, and the undo must be refused.
 */
function expectUndo(range: Recorded[], now: Tree): Tree | "refuse" {
  const state = new Map(now);
  for (const c of range) {
    for (const f of touched(c)) {
      const cur = state.get(f);
      if (same(cur, c.before.get(f))) continue;
      if (!same(cur, c.after.get(f))) return "refuse";
      const b = c.before.get(f);
      if (b === undefined) state.delete(f);
      else state.set(f, b);
    }
  }
  return state;
}

const fx = makeFixture("latch-undo-exact-");
after(() => fx.cleanup());

test(`undo exactness: ${SEQS} random sequences of edits, patches, moves and deletes with undos interleaved`, async (t) => {
  const host = await fx.host({
    config: {
      toolsPolicies: { local_fs: { _undo_max_bytes: String(1 << 30), _max_output_bytes: "262144" } },
      agents: {},
    },
  });
  const stats = { undos: 0, restored: 0, refused: 0, mismatches: 0, writes: 0, replacedBytes: 0, calls: 0 };
  const mismatch = (seed: number, step: number, what: string) => {
    stats.mismatches++;
    assert.fail(`seed ${seed}, step ${step}: ${what}`);
  };
  const from = Number(process.env.LATCH_UNDO_FROM ?? 0); // to run one failing sequence again
  for (let seq = from; seq < from + SEQS; seq++) {
    const seed = 1000 + seq;
    const rand = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const word = () => `w${Math.floor(rand() * 1e9).toString(36)}`;
    const lines = () => Array.from({ length: 1 + Math.floor(rand() * 6) }, word).join("\n") + "\n";
    const dir = `q${seq}`;
    const abs = path.join(fx.root, dir);
    mkdirSync(abs);
    for (const n of ["a.txt", "b.txt", "c/d.txt"]) {
      mkdirSync(path.dirname(path.join(abs, n)), { recursive: true });
      writeFileSync(path.join(abs, n), lines());
    }
    const session = `seq${seq}`;
    const call = (tool: string, args: Record<string, unknown>) => host.call(tool, args, { session }) as Promise<any>;
    const log: Recorded[] = [];
    const files = () => [...snapshot(abs).keys()];
    const readAll = async () => {
      for (const f of files()) await call("read_file", { path: `${dir}/${f}` });
    };
    for (let step = 0; step < STEPS; step++) {
      const now = files();
      const op = log.length > 0 && rand() < 0.3 ? pick(["undo", "undo", "since"]) : pick(WRITES);
      if (op === "external") {
        if (now.length) writeFileSync(path.join(abs, pick(now)), lines());
        continue;
      }
      await readAll();
      const before = snapshot(abs);
      if (op === "undo" || op === "since") {
        const k = Math.floor(rand() * log.length);
        const range = op === "undo" ? [log[k]] : log.slice(k).reverse();
        const want = expectUndo(range, before);
        const r = await call("undo", op === "undo" ? { call_id: log[k].id } : { since: log[k].id });
        const got = snapshot(abs);
        stats.undos++;
        if (want === "refuse") {
          if (r.status !== "refused" || !/changed since call/.test(r.reason))
            mismatch(seed, step, `expected a refusal, got ${JSON.stringify(r).slice(0, 400)}`);
          if (![...got.keys(), ...before.keys()].every((f) => same(got.get(f), before.get(f))))
            mismatch(seed, step, "a refused undo changed the disk");
          stats.refused++;
          continue;
        }
        if (r.status !== "ok") mismatch(seed, step, `expected the undo to run, got ${JSON.stringify(r).slice(0, 400)}`);
        for (const f of new Set([...got.keys(), ...want.keys()]))
          if (!same(got.get(f), want.get(f))) mismatch(seed, step, `${f}: not the exact bytes after undo`);
        stats.restored++;
        if (r.result.call_id) log.push({ id: r.result.call_id, before, after: got });
        continue;
      }
      const args = writeArgs(op, dir, now, pick, word, lines, rand, before);
      if (!args) continue;
      const r = await call(op, args);
      const got = snapshot(abs);
      if (r.status !== "ok") continue; // an edit that found no unique match, a move onto a folder …
      if (r.result.call_id) {
        const rec = { id: r.result.call_id, before, after: got };
        log.push(rec);
        stats.writes++;
        for (const f of touched(rec)) stats.replacedBytes += before.get(f)?.length ?? 0;
      }
    }
    stats.calls += log.length;
  }
  const db = new Database(path.join(fx.state, "latch.db"), { readonly: true });
  let stored: number;
  let rows: { calls: number; blobs: number };
  try {
    stored = (
      db
        .prepare(
          "SELECT coalesce(sum(pgsize), 0) AS b FROM dbstat WHERE name LIKE 'undo%' OR name LIKE 'sqlite_autoindex_undo%'",
        )
        .get() as { b: number }
    ).b;
    rows = db
      .prepare("SELECT (SELECT count(*) FROM undo_calls) AS calls, (SELECT count(*) FROM undo_blobs) AS blobs")
      .get() as { calls: number; blobs: number };
  } finally {
    db.close();
  }
  const rootBytes = Buffer.byteLength(fx.root) * (ROOT_COPIES.perCall * rows.calls + ROOT_COPIES.perBlob * rows.blobs);
  t.diagnostic(
    `${SEQS} sequences: ${stats.writes} writes, ${stats.undos} undos (${stats.restored} restored exactly, ${stats.refused} refused as changed since), ${stats.mismatches} mismatches; undo tables ${stored} bytes for ${stats.replacedBytes} bytes replaced over ${stats.calls} calls (${rows.blobs} blobs; root ${Buffer.byteLength(fx.root)} bytes)`,
  );
  assert.equal(stats.mismatches, 0);
  assert.ok(stats.restored > 0 && stats.refused > 0, "both outcomes were exercised");
  assert.ok(
    stored <= stats.replacedBytes + PER_CALL_OVERHEAD * stats.calls + FIXED_OVERHEAD + rootBytes,
    `storage ${stored} > ${stats.replacedBytes} replaced + ${PER_CALL_OVERHEAD} × ${stats.calls} calls + ${FIXED_OVERHEAD} + ${rootBytes} (the root's path in ${rows.calls} calls and ${rows.blobs} blobs)`,
  );
});

const WRITES = ["edit_file", "write_file", "sed", "apply_patch", "move_file", "delete_file", "external"] as const;

function writeArgs(
  op: string,
  dir: string,
  now: string[],
  pick: <T>(xs: readonly T[]) => T,
  word: () => string,
  lines: () => string,
  rand: () => number,
  tree: Tree,
): Record<string, unknown> | undefined {
  const p = (f: string) => `${dir}/${f}`;
  const fresh = () => pick(["a.txt", "b.txt", "n/e.txt", "c/f.txt", `g${Math.floor(rand() * 4)}.txt`]);
  const lineOf = (f: string) => pick(tree.get(f)!.toString("utf8").split("\n").filter(Boolean));
  if (op === "write_file") return { path: p(now.length && rand() < 0.6 ? pick(now) : fresh()), content: lines() };
  if (now.length === 0) return undefined;
  const f = pick(now);
  switch (op) {
    case "edit_file":
      return { path: p(f), old_string: lineOf(f), new_string: word() };
    case "sed":
      return { path: p(f), pattern: lineOf(f), replacement: word() };
    case "move_file": {
      const to = fresh();
      return { from: p(f), to: p(to), overwrite: rand() < 0.5 };
    }
    case "delete_file":
      return { path: p(f) };
    case "apply_patch": {
      const parts = ["*** Begin Patch", `*** Update File: ${p(f)}`];
      if (rand() < 0.3) parts.push(`*** Move to: ${p(fresh())}`);
      parts.push("@@", `-${lineOf(f)}`, `+${word()}`);
      const other = now.find((g) => g !== f);
      if (other && rand() < 0.4) parts.push(`*** Delete File: ${p(other)}`);
      if (rand() < 0.4) parts.push(`*** Add File: ${p(`added${Math.floor(rand() * 3)}.txt`)}`, `+${word()}`);
      parts.push("*** End Patch");
      return { patch: parts.join("\n") };
    }
  }
  return undefined;
}

/** Boot the writer, let it run `ms` after it is ready, kill it with SIGKILL. */
async function runAndKill(root: string, state: string, ms: number): Promise<void> {
  const child = spawn(process.execPath, [LOOP, root, state], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<void>((resolve, reject) =>
    child.once("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`the writer ended by itself (${code}): ${err}`)),
    ),
  );
  // After its first write call (a loaded machine can take seconds to get there), at a random moment.
  let out = "";
  child.stdout.on("data", (d) => {
    const first = !out.includes("w\n");
    out += d;
    if (first && out.includes("w\n")) setTimeout(() => child.kill("SIGKILL"), ms);
  });
  await exited;
}

test(`SIGKILL at random points of random writes and undos, ${KILLS} times: the newest call undoes to its exact pre-images`, async (t) => {
  const k = makeFixture("latch-undo-kill-");
  after(() => k.cleanup());
  k.write({ "a.txt": "start\n" });
  const host = await k.host();
  const store = new PreImages(host.state.db);
  let restored = 0;
  let already = 0;
  try {
    for (let i = 0; i < KILLS; i++) {
      await runAndKill(k.root, k.state, 50 + Math.floor(Math.random() * 400));
      const [newest] = store.list(host.root, "killme", 1);
      assert.ok(newest, `round ${i}: the writer made at least one write call`);
      const out: any = await host.call("undo", { call_id: newest.callId }, { session: "killme" });
      assert.equal(out.status, "ok", `round ${i}: ${JSON.stringify(out).slice(0, 600)}`);
      for (const f of newest.files) {
        const p = path.join(k.root, f.rel);
        const now = statSync(p, { throwIfNoEntry: false }) ? sha256(readFileSync(p)) : null;
        assert.equal(now, f.beforeSha, `round ${i}, ${newest.tool} ${f.rel}: not the exact bytes it replaced`);
      }
      for (const c of out.result.undone[0].files) {
        if (c.action === "restore") restored++;
        else already++;
      }
    }
  } finally {
    store.close();
  }
  t.diagnostic(`${KILLS} kills: ${restored} files restored, ${already} already as before (killed before the rename)`);
});
