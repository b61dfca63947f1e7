// The three durability points of a write, tried on edit_file in a real `latch call` process through
// the fault shim (test/helpers/fault-shim.ts), now that the decision's fdatasync runs on the thread
// pool beside the write's own syncs (RunLog.decisionSyncing, MutationContext.decisionSynced):
// 1. the decision is durable before the write lands: its sync failing (EIO) or the process killed at
//    it leaves the file as it was, and no temp file behind;
// 2. the new file is durable before it is renamed in and reported: killed at the temp file's fsync,
//    the file is as it was; failing there, the call says nothing was changed;
// 3. the folder is synced after the rename and before the result: killed at the folder's fsync, the
//    file holds the new text and nothing was reported;
// and undo's: the pre-images are durable before the rename. They are committed unsynced and the WAL
// file of latch.db is fdatasynced on the thread pool (src/fs/preimages.ts): killed at that sync, the
// file is as it was; failing there (EIO), the call says nothing was written, and the file is as it was.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { CLI } from "../helpers/cli.js";
import { buildFaultShim } from "../helpers/fault-shim.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { outcomes, policyLogs, RawStdio } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const base = makeFixture("latch-durable-");
after(() => base.cleanup());
const shim = buildFaultShim();
after(() => shim.cleanup());
const SHIM = shim.lib;

function call(fx: Fixture, tool: string, args: unknown, fault?: string) {
  const r = spawnSync(
    process.execPath,
    [CLI, "call", tool, JSON.stringify(args), "--root", fx.root, "--state-dir", fx.state, "--session", "s", "--yes"],
    { encoding: "utf8", env: { ...process.env, ...(fault ? { LD_PRELOAD: SHIM, LATCH_FAULT: fault } : {}) } },
  );
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { signal: r.signal, json, stdout: r.stdout, out: r.stdout + r.stderr };
}

/** A workspace with f.txt read by session s (in its own process, as every `latch call`). */
function readied(): Fixture {
  const fx = makeFixture("latch-durable-case-", base.base);
  fx.write({ "f.txt": "before\n" });
  const r = call(fx, "read_file", { path: "f.txt" });
  assert.equal(r.json?.status, "ok", r.out);
  return fx;
}

const EDIT = { path: "f.txt", old_string: "before", new_string: "after" };
const content = (fx: Fixture) => readFileSync(path.join(fx.root, "f.txt"), "utf8");
const temps = (fx: Fixture) => readdirSync(fx.root).filter((n) => n.includes(".latch-"));

// The policy log of a `latch call` is synced for run_started (1st fdatasync), then for the edit's
// decision (2nd), on the thread pool while the edit stages its temp file.
test("the decision's fdatasync fails (EIO): the edit does not land, is refused by the log, leaves no temp file", () => {
  const fx = readied();
  const r = call(fx, "edit_file", EDIT, "fdatasync:policy-*:2:EIO");
  assert.equal(r.json?.status, "refused", r.out);
  assert.equal(r.json.gate, "log", r.out);
  assert.match(r.json.reason, /policy log .* cannot be written \(EIO\)/);
  assert.equal(content(fx), "before\n", "the write landed before its decision was durable");
  assert.deepEqual(temps(fx), []);
});

test("killed at the decision's fdatasync: the file is as it was; the next call cleans up and the edit lands", () => {
  const fx = readied();
  const r = call(fx, "edit_file", EDIT, "fdatasync:policy-*:2:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(content(fx), "before\n");
  const again = call(fx, "edit_file", EDIT);
  assert.equal(again.json?.status, "ok", again.out);
  assert.equal(content(fx), "after\n");
  assert.deepEqual(temps(fx), []);
});

test("an edit that fails before it writes (its old_string is not there) still has its decision synced", () => {
  const fx = readied();
  const r = call(fx, "edit_file", { ...EDIT, old_string: "absent" }, "fdatasync:policy-*:2:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  // Killed at the decision's sync, before the outcome was written (not at run_finished's, which follows it):
  // a call must not depend on its write to have its decision made durable.
  const killedRun = policyLogs(fx.state).filter((f) => readFileSync(f, "utf8").includes('"tool":"edit_file"'));
  assert.equal(killedRun.length, 1);
  assert.deepEqual(
    outcomes(killedRun[0]),
    [],
    "the decision of a call that wrote nothing was not synced before its outcome",
  );
  assert.equal(content(fx), "before\n");
  assert.deepEqual(temps(fx), []);
});

test("killed at the temp file's fsync: the file is as it was; failing there (EIO), the call says nothing changed", () => {
  const fx = readied();
  const r = call(fx, "edit_file", EDIT, "fsync:.f.txt.latch-*:1:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(content(fx), "before\n");
  const e = call(fx, "edit_file", EDIT, "fsync:.f.txt.latch-*:1:EIO");
  assert.equal(e.json?.status, "error", e.out);
  assert.match(e.json.message, /nothing was changed/);
  assert.equal(content(fx), "before\n");
  assert.deepEqual(temps(fx), []);
});

test("killed at the folder's fsync after the rename: the new text is there, and no result was reported", () => {
  const fx = readied();
  // The workspace folder is named `ws` (fixture.ts); its fsync follows the rename of f.txt into it.
  const r = call(fx, "edit_file", EDIT, "fsync:ws:1:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(r.stdout, "", "a result was reported before the folder was synced");
  assert.equal(content(fx), "after\n");
});

// SQLite syncs latch.db's WAL with fsync (its header, at checkpoints); the pre-images' own sync is the
// one fdatasync of that file in the edit's process.
test("killed at the pre-images' sync (latch.db's WAL): the file is as it was; the next call lands and undoes", () => {
  const fx = readied();
  const r = call(fx, "edit_file", EDIT, "fdatasync:latch.db-wal:1:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(content(fx), "before\n", "the write landed before its pre-image was durable");
  const again = call(fx, "edit_file", EDIT);
  assert.equal(again.json?.status, "ok", again.out);
  assert.equal(content(fx), "after\n");
  const undo = call(fx, "undo", { call_id: again.json.result.call_id });
  assert.equal(undo.json?.status, "ok", undo.out);
  assert.equal(content(fx), "before\n");
  assert.deepEqual(temps(fx), []);
});

test("the pre-images' sync fails (EIO): the edit does not land, says nothing was written, leaves no temp file", () => {
  const fx = readied();
  const r = call(fx, "edit_file", EDIT, "fdatasync:latch.db-wal:1:EIO");
  assert.equal(r.json?.status, "error", r.out);
  assert.equal(r.json.code, "ESTATE", r.out);
  assert.match(r.json.message, /could not keep what this write replaces.*Nothing was written/);
  assert.equal(content(fx), "before\n", "the write landed although its pre-image was not durable");
  assert.deepEqual(temps(fx), []);
});

// A read's log lines are synced by a timer on the thread pool (src/audit/log.ts), and the kernel tells
// a writeback error to one fdatasync of a file only. Here the timer's sync is the failing one, held
// (a failing disk's slow EIO) while a write's decision is written and synced: that sync succeeds, yet
// the write must not land, since the line it follows may be lost (PolicyLog.settled). write_file syncs
// its decision on this thread; edit_file on the pool, beside its own syncs.
for (const tool of ["write_file", "edit_file"] as const) {
  test(`a sync of the log under way fails after ${tool}'s decision was synced: the ${tool} does not land`, async () => {
    const fx = makeFixture("latch-durable-case-", base.base);
    fx.write({ "f.txt": "before\n" });
    const mark = path.join(fx.base, "held");
    const gate = path.join(fx.base, "go");
    // latch mcp's policy log: run_started is synced (its 1st fdatasync), the read's lines by the timer (2nd).
    const s = new RawStdio(["--root", fx.root, "--state-dir", fx.state, "--yes"], {
      LD_PRELOAD: SHIM,
      LATCH_FAULT: "fdatasync:policy-*:2:EIOGATE",
      LATCH_FAULT_MARK: mark,
      LATCH_FAULT_GATE: gate,
    });
    try {
      await s.init();
      const read = await s.call(1, "read_file", { path: "f.txt" });
      assert.equal(read.result?.isError, undefined, JSON.stringify(read));
      assert.ok(await waitFor(() => existsSync(mark)), "the timer's sync of the read's lines is held");
      const answer = s.call(2, tool, tool === "write_file" ? { path: "f.txt", content: "after\n" } : EDIT);
      const [log] = policyLogs(fx.state);
      const decided = () => readFileSync(log, "utf8").includes(`"tool":"${tool}"`);
      assert.ok(await waitFor(decided), "the write's decision is in the log");
      // Its own sync comes right after the line: a write that did not wait for the held one lands now.
      await new Promise((r) => setTimeout(r, 300));
      writeFileSync(gate, "");
      const r = await answer;
      assert.equal(content(fx), "before\n", "the write landed while a sync of its log was failing");
      assert.equal(r.result?.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.result), /policy log .* cannot be written \(EIO\)/);
      assert.deepEqual(temps(fx), []);
    } finally {
      writeFileSync(gate, "");
      s.child.stdin.end();
      await s.exited;
    }
  });
}

// The session's marker of the new content is reserved once the temp file is synced, while the
// pre-images' sync may still run (mutate.ts): a write abandoned after that takes it back. In one
// server (a `latch call` process's successor would recover it from the journal instead), a marker left
// behind is what the session's next write is based on, and that write is refused as stale.
test("the pre-images' sync fails (EIO) after the marker was reserved: the same server's next edit lands", async () => {
  const fx = makeFixture("latch-durable-case-", base.base);
  fx.write({ "f.txt": "before\n" });
  const s = new RawStdio(["--root", fx.root, "--state-dir", fx.state, "--yes"], {
    LD_PRELOAD: SHIM,
    LATCH_FAULT: "fdatasync:latch.db-wal:1:EIO",
  });
  try {
    await s.init();
    const read = await s.call(1, "read_file", { path: "f.txt" });
    assert.equal(read.result?.isError, undefined, JSON.stringify(read));
    const failed = await s.call(2, "edit_file", EDIT);
    assert.equal(failed.result?.isError, true, JSON.stringify(failed));
    assert.match(JSON.stringify(failed.result), /could not keep what this write replaces/);
    assert.equal(content(fx), "before\n");
    const again = await s.call(3, "edit_file", EDIT);
    assert.equal(again.result?.isError, undefined, JSON.stringify(again));
    assert.equal(content(fx), "after\n");
  } finally {
    s.child.stdin.end();
    await s.exited;
  }
});
