// One connection to latch.db for the parts of a host that write it at every call: the ledger opens it,
// the undo store and the policy log's heads borrow it (src/host/create-host.ts). Each connection's
// commit emptied the others' page caches, so an edit cycle read ~20 pages back from disk; borrowed,
// each part still behaves as its own: close() leaves the owner's connection open, and the heads
// keep their short wait for a busy database without changing the ledger's.
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { LogHeads } from "../../src/audit/log-heads.js";
import { Ledger } from "../../src/fs/ledger.js";
import { PreImages } from "../../src/fs/preimages.js";
import { LEDGER_BUSY_MS } from "../../src/fs/sqlite-busy.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-state-conn-");
after(() => fx.cleanup());

/** This process's descriptors of `file` itself (not its -wal or -shm): one per SQLite connection. */
function descriptorsOf(file: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile (the listing's own descriptor)
    }
  }
  return n;
}

test("a host's ledger, undo store and log heads hold one connection to latch.db between them", async () => {
  const h = await fx.host({ policyLog: path.join(fx.base, "conn.jsonl") });
  try {
    writeFileSync(path.join(fx.root, "e.txt"), "one\n");
    const r = (await h.call("read_file", { path: "e.txt" }, { session: "c" })) as { status: string };
    assert.equal(r.status, "ok");
    const e = (await h.call(
      "edit_file",
      { path: "e.txt", old_string: "one", new_string: "two" },
      { session: "c" },
    )) as {
      status: string;
    };
    assert.equal(e.status, "ok", JSON.stringify(e));
    // The ledger's (shared by the undo store and the heads) and the approval queue's, which answers
    // other processes' approvals and writes only when a call waits for one.
    assert.equal(descriptorsOf(h.state.db), 2);
  } finally {
    h.close();
  }
  assert.equal(descriptorsOf(h.state.db), 0, "closing the host closes the shared connection");
});

test("an undo store on a borrowed connection uses it and leaves it open at close()", async () => {
  const file = path.join(fx.base, "borrowed-undo.db");
  const ledger = new Ledger(file);
  try {
    const store = new PreImages(file, { db: ledger.db });
    const kept = store.journal({ callId: "c1", root: "/r", session: "s", tool: "edit_file", cap: 1 << 20 });
    await kept.keep([{ target: { rel: "a.txt" }, before: Buffer.from("before\n"), afterSha: "x" }]);
    assert.equal(descriptorsOf(file), 1, "the store opened no connection of its own");
    store.close();
    assert.equal(ledger.db.open, true, "the ledger's connection is still open");
    const row = ledger.db.prepare("SELECT count(*) AS n FROM undo_files").get() as { n: number };
    assert.equal(row.n, 1);
  } finally {
    ledger.close();
  }
});

test("log heads on a borrowed connection wait ~1 s for a busy database in each write, then give the ledger its own wait back", () => {
  const file = path.join(fx.base, "borrowed-heads.db");
  const ledger = new Ledger(file);
  const heads = new LogHeads(file, { db: ledger.db });
  const other = new Database(file);
  try {
    heads.record("/log.jsonl", "h1", 1);
    assert.equal(ledger.db.pragma("busy_timeout", { simple: true }), LEDGER_BUSY_MS);
    other.exec("BEGIN IMMEDIATE"); // another process holds the write lock
    // The heads' own wait (1 s), not the ledger's 10 s: the heads are kept inside the log's sync, and
    // marked pruned while a host closes.
    for (const write of [() => heads.record("/log.jsonl", "h2", 2), () => heads.markPruned("/log.jsonl")]) {
      const t = Date.now();
      assert.throws(write, /busy|locked/i);
      const waited = Date.now() - t;
      assert.ok(waited >= 900 && waited < LEDGER_BUSY_MS / 2, `waited ${waited} ms`);
      assert.equal(ledger.db.pragma("busy_timeout", { simple: true }), LEDGER_BUSY_MS, "the ledger's wait is back");
    }
    other.exec("ROLLBACK");
    heads.close();
    assert.equal(ledger.db.open, true, "closing the heads leaves the ledger's connection open");
    const row = ledger.db.prepare("SELECT head FROM log_heads WHERE file = ?").get("/log.jsonl") as { head: string };
    assert.equal(row.head, "h1");
  } finally {
    other.close();
    ledger.close();
  }
});
