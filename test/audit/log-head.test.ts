// A policy log re-chained from line 1 no longer verifies: each run's head (last line's hash, line
// count) is kept in the state database as the log grows, and `latch log verify` compares.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { GENESIS_SHA256, LogWriteError, lineHash } from "../../src/audit/log.js";
import { LogHeads } from "../../src/audit/log-heads.js";
import { RunLog } from "../../src/audit/run-log.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

/** Rewrite a log's records with `edit`, recomputing every hash: a chain that verifies on its own. */
function rechain(file: string, edit: (records: Record<string, unknown>[]) => Record<string, unknown>[]): void {
  const records = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l).record as Record<string, unknown>);
  let previous = GENESIS_SHA256;
  const lines = edit(records).map((record, i) => {
    const sequence = i + 1;
    const record_sha256 = lineHash(sequence, previous, record);
    const line = JSON.stringify({ sequence, previous_sha256: previous, record, record_sha256 });
    previous = record_sha256;
    return line + "\n";
  });
  writeFileSync(file, lines.join(""));
}

test("a log re-chained from line 1 (a denial's reason rewritten) fails verify; the one latch wrote passes", async () => {
  const log = path.join(fx.base, "run.jsonl");
  fx.write({ "a.txt": "x\n" });
  const h = await fx.host({ policyLog: log, envelope: "read_only" });
  assert.equal((await h.call("read_file", { path: "a.txt" })).status, "ok");
  assert.equal((await h.call("write_file", { path: "a.txt", content: "y\n" })).status, "refused");
  h.close();

  const good = await runCli(["log", "verify", "--state-dir", fx.state, log]);
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.match(good.stdout, /: ok: 5 records, .*, head kept\n/);

  const original = readFileSync(log, "utf8");
  rechain(log, (records) =>
    records.map((r) => (r.type === "effect_decision" && r.final === "deny" ? { ...r, reason: "nothing to see" } : r)),
  );
  assert.notEqual(readFileSync(log, "utf8"), original);
  const forged = await runCli(["log", "verify", "--state-dir", fx.state, log]);
  assert.equal(forged.code, 1, forged.stdout);
  assert.match(forged.stdout, /the chain is whole, but latch kept another head .* rewritten or cut/);

  // Cut short and re-chained (the refused write dropped, run_finished kept): caught the same way.
  writeFileSync(log, original);
  rechain(log, (records) => records.filter((r) => r.tool !== "write_file"));
  const cut = await runCli(["log", "verify", "--state-dir", fx.state, log]);
  assert.equal(cut.code, 1, cut.stdout);
});

const INFO = { configSha256: null, programs: [], posture: null, evidence: false, envelope: "auto_edit" };
const READ = { tool: "read_file", session: "s", request: {}, gates: [], final: "allow", reason: "r" };
const lineCount = (file: string) => readFileSync(file, "utf8").split("\n").length - 1;

test("a head that cannot be kept refuses every call while it cannot: nothing more is written to the log", () => {
  const file = path.join(fx.base, "unkept.jsonl");
  const heads = new LogHeads(path.join(fx.state, "latch.db"));
  const log = new RunLog(file, INFO, true, heads);
  heads.close(); // the state database is gone from under the run: every record() throws
  assert.throws(() => log.decision(READ, "sync"), LogWriteError);
  const after = lineCount(file);
  assert.throws(() => log.decision(READ, "sync"), /head cannot be kept/);
  assert.equal(lineCount(file), after, "the blocked call's decision was still appended");
  assert.match(log.broken ?? "", /head cannot be kept/);
  log.finish();
});

test("the head is kept once per sync of the log, not once per line; a finished log's head is its last line", () => {
  const file = path.join(fx.base, "per-sync.jsonl");
  const db = path.join(fx.state, "latch.db");
  let kept = 0;
  const heads = new (class extends LogHeads {
    override record(f: string, head: string, lines: number): void {
      kept++;
      super.record(f, head, lines);
    }
  })(db);
  const log = new RunLog(file, INFO, true, heads); // run_started: synced, kept
  assert.equal(kept, 1);
  // Reads: decisions and outcomes written, synced later (no event-loop turn here, so no timer runs).
  for (let i = 0; i < 50; i++) log.outcome(log.decision(READ, "write"), "ok", { i });
  assert.equal(kept, 1, "a read's decision or outcome wrote the head on its own");
  log.decision({ ...READ, tool: "write_file" }, "sync"); // a synced decision keeps the head it ends
  assert.equal(kept, 2);
  assert.deepEqual(pick(heads.get(file)), { lines: 102 });
  log.finish(); // the write's outcome (interrupted) and run_finished: the head is the file's last line
  const last = JSON.parse(readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { record_sha256: string };
  assert.deepEqual(pick(heads.get(file), true), { lines: lineCount(file), head: last.record_sha256 });
  heads.close();
});

function pick(h: { head: string; lines: number } | undefined, withHead = false) {
  return h && (withHead ? { lines: h.lines, head: h.head } : { lines: h.lines });
}
