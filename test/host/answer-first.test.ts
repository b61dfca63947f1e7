// A caller that answers first (CallOptions.answerFirst: MCP's transports) gets a read's answer before
// its outcome line and its ledger record are written; the line follows in the event loop's next turn,
// the record within SOON_MS (reads in that time share one commit), and anything that needs them sooner
// (another line, a write's base check, another process after that, the host's close) finds them
// written, in call order.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { RunLog } from "../../src/audit/run-log.js";
import { Ledger, SOON_MS } from "../../src/fs/ledger.js";
import { makeFixture } from "../helpers/fixture.js";
import { policyLogs, RawStdio } from "../helpers/raw-stdio.js";
import { runCli } from "../helpers/cli.js";

const fx = makeFixture();
after(() => fx.cleanup());

const info = { configSha256: null, programs: [], posture: null, evidence: false, envelope: "default" };
const records = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).record as { type: string; effect_id?: number });
const turn = () => new Promise((r) => setImmediate(r));
/** Past the ledger's batch: a timer made after its own, twice as long, fires after it. */
const batch = () => new Promise((r) => setTimeout(r, 2 * SOON_MS));
const decision = (tool: string) => ({ tool, session: "s", request: {}, gates: [], final: "allow", reason: "r" });

test("an outcome left for later is written in the next turn, or before the next line, in order", async () => {
  const file = path.join(fx.base, "soon.jsonl");
  const log = new RunLog(file, info, false);
  const one = log.decision(decision("read_file"), "write");
  log.outcome(one, "ok", { content: "x" }, false, undefined, undefined, [], { soon: true });
  assert.deepEqual(
    records(file).map((r) => r.type),
    ["run_started", "effect_decision"],
    "not written while the answer goes out",
  );
  await turn();
  assert.deepEqual(
    records(file).map((r) => r.type),
    ["run_started", "effect_decision", "effect_outcome"],
  );

  // A decision in the same turn writes the waiting outcome first.
  const two = log.decision(decision("read_file"), "write");
  log.outcome(two, "ok", { content: "y" }, false, undefined, undefined, [], { soon: true });
  const three = log.decision(decision("grep"), "write");
  assert.deepEqual(
    records(file)
      .slice(3)
      .map((r) => `${r.type} ${r.effect_id}`),
    [`effect_decision ${two}`, `effect_outcome ${two}`, `effect_decision ${three}`],
  );

  // finish() writes what waits, and nothing is written after run_finished.
  log.outcome(three, "ok", {}, false, undefined, undefined, [], { soon: true });
  log.finish();
  await turn();
  const types = records(file).map((r) => r.type);
  assert.deepEqual(types.slice(-2), ["effect_outcome", "run_finished"]);
});

test("a read recorded soon is seen by this ledger at once, and by another connection after its batch", async () => {
  const file = path.join(fx.base, "soon.db");
  const a = new Ledger(file);
  const b = new Ledger(file);
  a.recordSoon("s", "/w/a", "h1", "full");
  assert.equal(a.seen("s", "/w/a", "h1"), "full", "this process's next use writes it first");
  a.recordSoon("s", "/w/b", "h2", "range");
  a.recordSoon("s", "/w/b", "h3", "full"); // the newer content retires the older, as record does
  assert.equal(b.seen("s", "/w/b", "h3"), undefined, "not in the database before the batch");
  await batch();
  assert.equal(b.seen("s", "/w/b", "h3"), "full");
  assert.equal(b.seen("s", "/w/b", "h2"), undefined);
  // One batch, one path: its latest content counts, and a whole read of it is not lost to a part read after.
  a.recordSoon("s", "/w/e", "h5", "full");
  a.recordSoon("s", "/w/e", "h5", "range");
  a.recordSoon("s", "/w/f", "h6", "full");
  a.recordSoon("s", "/w/f", "h7", "range");
  await batch();
  assert.equal(b.seen("s", "/w/e", "h5"), "full");
  assert.equal(b.seen("s", "/w/f", "h7"), "range");
  assert.equal(b.seen("s", "/w/f", "h6"), undefined, "the newer content retired the older");
  // A write's marker reserved after a read waiting in the same turn is not undone by it.
  a.recordSoon("s", "/w/c", "old", "full");
  a.reserve("s", "/w/c", "new", "full");
  a.settle("s", "/w/c", "new");
  await batch();
  assert.equal(b.latest("s", "/w/c"), "new");
  a.recordSoon("s", "/w/d", "h4", "full");
  a.close();
  assert.equal(b.seen("s", "/w/d", "h4"), "full", "close writes what waits");
  b.close();
});

test("over stdio: reads answered first, then an edit at once: the edit finds the reads, the log verifies in order", async () => {
  fx.write({ "one-turn.txt": "alpha\nbeta\n" });
  const state = path.join(fx.base, "st-turn");
  const s = new RawStdio(["--root", fx.root, "--state-dir", state, "--yes"]);
  try {
    await s.init();
    for (let i = 1; i <= 20; i++) {
      const r = await s.call(i, "read_file", { path: "one-turn.txt", force: true });
      assert.equal(r.result?.isError, undefined, JSON.stringify(r));
    }
    const e = await s.call(21, "edit_file", { path: "one-turn.txt", old_string: "beta", new_string: "gamma" });
    assert.equal(e.result?.isError, undefined, JSON.stringify(e));
    assert.equal(readFileSync(path.join(fx.root, "one-turn.txt"), "utf8"), "alpha\ngamma\n");
  } finally {
    s.child.stdin.end();
    await s.exited;
  }
  const [log] = policyLogs(state);
  const kinds = records(log)
    .filter((r) => r.type.startsWith("effect_"))
    .map((r) => `${r.type === "effect_decision" ? "d" : "o"}${r.effect_id}`);
  assert.deepEqual(
    kinds,
    Array.from({ length: 21 }, (_, i) => [`d${i + 1}`, `o${i + 1}`]).flat(),
    "each read's outcome before the next decision",
  );
  const verified = await runCli(["log", "verify", "--state-dir", state, log]);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
});
