// The state database's one opener (src/fs/db.ts): a latch.db made by the code before schema versions
// were kept opens with its rows and is migrated; one made by a newer latch is refused and left as it
// was; a new one and its WAL side files are for the user alone.
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { ApprovalQueue } from "../../src/store/sqlite.js";
import { ToolError } from "../../src/errors.js";
import { SCHEMA_VERSION } from "../../src/fs/db.js";
import { Ledger } from "../../src/fs/ledger.js";
import { LogHeads } from "../../src/audit/log-heads.js";
import { PreImages } from "../../src/fs/preimages.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

/** latch.db as the code before versions made it: its three tables, approvals without `meta`, version 0. */
function oldDb(file: string): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE reads (
      session TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
      full INTEGER NOT NULL, at INTEGER NOT NULL,
      PRIMARY KEY (session, path, sha256));
    CREATE TABLE approvals (
      id TEXT PRIMARY KEY, tool TEXT NOT NULL, session TEXT NOT NULL, reason TEXT NOT NULL,
      args TEXT NOT NULL, diff TEXT, diff_note TEXT, state TEXT NOT NULL,
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, pid INTEGER NOT NULL);
    CREATE TABLE log_heads (file TEXT PRIMARY KEY, head TEXT NOT NULL, lines INTEGER NOT NULL, updated_at TEXT NOT NULL);`);
  const now = Date.now();
  db.prepare("INSERT INTO reads VALUES ('s1', '/w/a.txt', 'h1', 1, ?)").run(now);
  db.prepare(
    "INSERT INTO approvals VALUES ('ab12cd34', 'write_file', 's1', 'the envelope asks', '{\"path\":\"a.txt\"}', NULL, NULL, 'pending', ?, ?, ?)",
  ).run(now, now + 3_600_000, process.pid);
  db.prepare("INSERT INTO log_heads VALUES ('/logs/run.jsonl', 'deadbeef', 7, '2026-01-01T00:00:00.000Z')").run();
  db.close();
}

function inspect(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return {
      version: db.pragma("user_version", { simple: true }) as number,
      tables: (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
      ).map((t) => t.name),
      approvalCols: (db.prepare("PRAGMA table_info(approvals)").all() as { name: string }[]).map((c) => c.name),
    };
  } finally {
    db.close();
  }
}

test("a latch.db made before schema versions opens with its rows kept, migrated to the current version", () => {
  const file = path.join(fx.base, "old.db");
  oldDb(file);
  assert.equal(inspect(file).version, 0);

  const ledger = new Ledger(file);
  assert.equal(ledger.seen("s1", "/w/a.txt", "h1"), "full");
  const queue = new ApprovalQueue(file);
  const [old] = queue.list();
  assert.equal(old.id, "ab12cd34");
  assert.deepEqual(old.args, { path: "a.txt" });
  assert.deepEqual([old.risk, old.scope, old.content_sha256], [[], null, null]);
  // The column the old schema lacked takes a new request's risk.
  const id = queue.add({
    tool: "write_file",
    args: {},
    session: "s2",
    reason: "r",
    timeoutMs: 60_000,
    risk: ["writes files"],
    host: "h",
    workspace: "/w",
    shownSha256: "0".repeat(64),
  });
  assert.deepEqual(queue.get(id)?.risk, ["writes files"]);
  const heads = new LogHeads(file);
  assert.deepEqual(heads.get("/logs/run.jsonl"), {
    head: "deadbeef",
    lines: 7,
    updated_at: "2026-01-01T00:00:00.000Z",
    pruned_at: null,
  });
  for (const c of [ledger, queue, heads]) c.close();

  const after = inspect(file);
  assert.equal(after.version, SCHEMA_VERSION);
  assert.ok(after.approvalCols.includes("meta"));
  assert.deepEqual(after.tables, [
    "approvals",
    "journal",
    "log_heads",
    "reads",
    "sqlite_sequence",
    "tool_pins",
    "undo_blobs",
    "undo_calls",
    "undo_files",
    "undo_roots",
  ]);
});

test("a host opens an old state dir's latch.db, and its read ledger still counts the old read", async () => {
  mkdirSync(fx.state, { recursive: true, mode: 0o700 });
  const file = path.join(fx.state, "latch.db");
  oldDb(file);
  const host = await fx.host();
  fx.write({ "b.txt": "one\n" });
  assert.equal((await host.call("read_file", { path: "b.txt" })).status, "ok");
  assert.equal((await host.call("write_file", { path: "b.txt", content: "two\n" })).status, "ok");
  host.close();
  assert.equal(inspect(file).version, SCHEMA_VERSION);
  const ledger = new Ledger(file);
  assert.equal(ledger.seen("s1", "/w/a.txt", "h1"), "full", "the old row is still there");
  ledger.close();
});

test("a latch.db from a newer latch is refused with ESTATE and left as it was", () => {
  const file = path.join(fx.base, "newer.db");
  const db = new Database(file);
  db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  db.close();
  for (const open of [
    () => new Ledger(file),
    () => new ApprovalQueue(file),
    () => new LogHeads(file, { readonly: true }),
  ]) {
    assert.throws(open, (err) => {
      assert.ok(err instanceof ToolError);
      assert.equal(err.code, "ESTATE");
      assert.match(err.message, new RegExp(`made by a newer latch \\(schema version ${SCHEMA_VERSION + 1}`));
      assert.match(err.message, /another --state-dir/);
      return true;
    });
  }
  assert.deepEqual(inspect(file), { version: SCHEMA_VERSION + 1, tables: [], approvalCols: [] });
  const raw = new Database(file, { readonly: true });
  assert.equal(raw.pragma("journal_mode", { simple: true }), "delete", "not even switched to WAL");
  raw.close();
});

test("a new latch.db and its WAL side files are 0600", () => {
  const dir = path.join(fx.base, "fresh");
  mkdirSync(dir);
  const file = path.join(dir, "latch.db");
  const ledger = new Ledger(file);
  ledger.record("s", "/w/x", "h", "full");
  for (const f of [file, `${file}-wal`, `${file}-shm`])
    assert.equal((statSync(f).mode & 0o777).toString(8), "600", `${path.basename(f)} is for this user alone`);
  assert.equal(inspect(file).version, SCHEMA_VERSION);
  ledger.close();
});

test("an undo store made at schema 8 keeps its calls, files and blobs through migration 9, which drops the pages each write paid for", () => {
  const file = path.join(fx.base, "v8.db");
  const v8 = new Database(file);
  v8.pragma("journal_mode = WAL");
  // The undo tables as migration 6 made them (the other tables do not take part in migration 9).
  v8.exec(`CREATE TABLE undo_calls (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL UNIQUE, root TEXT NOT NULL,
      session TEXT NOT NULL, tool TEXT NOT NULL, at INTEGER NOT NULL);
    CREATE INDEX undo_calls_by_root ON undo_calls (root, session, seq);
    CREATE TABLE undo_files (
      seq INTEGER NOT NULL, n INTEGER NOT NULL, rel TEXT NOT NULL, before_sha TEXT, before_size INTEGER,
      note TEXT, after_sha TEXT, PRIMARY KEY (seq, n));
    CREATE TABLE undo_blobs (
      root TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, deflated INTEGER NOT NULL,
      data BLOB NOT NULL, last_seq INTEGER NOT NULL, PRIMARY KEY (root, sha256));
    CREATE INDEX undo_blobs_by_age ON undo_blobs (root, last_seq);`);
  const before = Buffer.from("old bytes\n");
  const sha = createHash("sha256").update(before).digest("hex");
  v8.prepare("INSERT INTO undo_calls VALUES (41, 'call-41', '/w', 's1', 'edit_file', 1)").run();
  v8.prepare("INSERT INTO undo_files VALUES (41, 0, 'a.txt', ?, ?, NULL, 'after')").run(sha, before.length);
  v8.prepare("INSERT INTO undo_blobs VALUES ('/w', ?, ?, 0, ?, 41)").run(sha, before.length, before);
  v8.pragma("user_version = 8");
  v8.close();

  const store = new PreImages(file);
  const old = store.call("/w", "call-41");
  assert.equal(old?.seq, 41);
  assert.deepEqual(old?.files, [
    { rel: "a.txt", beforeSha: sha, beforeSize: before.length, note: null, afterSha: "after" },
  ]);
  assert.deepEqual(store.blob("/w", sha), before);
  store.close();

  const db = new Database(file, { readonly: true });
  const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'undo%'").all() as {
    type: string;
    name: string;
    sql: string | null;
  }[];
  db.close();
  const names = schema.map((s) => s.name);
  assert.ok(!names.includes("undo_calls_by_root") && !names.includes("undo_blobs_by_age"), names.join(", "));
  const sql = (n: string) => schema.find((s) => s.name === n)?.sql ?? "";
  assert.match(sql("undo_files"), /WITHOUT ROWID/);
  assert.doesNotMatch(sql("undo_calls"), /AUTOINCREMENT/);
  assert.equal(inspect(file).version, SCHEMA_VERSION);
});

test("migration 10 counts each root's undo bytes and calls once, into undo_roots", () => {
  const file = path.join(fx.base, "v9.db");
  new PreImages(file).close();
  // Back to version 9 with rows of two roots, as a latch before the running totals left them.
  const v9 = new Database(file);
  v9.exec("DROP TABLE undo_roots");
  const blob = v9.prepare("INSERT INTO undo_blobs VALUES (?, ?, ?, 0, ?, ?)");
  const call = v9.prepare("INSERT INTO undo_calls VALUES (?, ?, ?, 's', 'write_file', 1)");
  for (const [seq, root, bytes] of [
    [1, "/a", 100],
    [2, "/a", 250],
    [3, "/b", 40],
  ] as const) {
    call.run(seq, `c${seq}`, root);
    blob.run(root, `sha${seq}`, bytes, Buffer.alloc(bytes), seq);
  }
  call.run(4, "c4", "/a"); // a call whose pre-image was already kept: no blob of its own
  v9.pragma("user_version = 9");
  v9.close();

  new PreImages(file).close();
  const db = new Database(file, { readonly: true });
  assert.deepEqual(db.prepare("SELECT root, bytes, calls FROM undo_roots ORDER BY root").all(), [
    { root: "/a", bytes: 350, calls: 3 },
    { root: "/b", bytes: 40, calls: 1 },
  ]);
  assert.equal(db.pragma("user_version", { simple: true }), SCHEMA_VERSION);
  db.close();
});

test("undo calls list newest first, each with a seq of its own (a plain rowid since migration 9)", async () => {
  const store = new PreImages(path.join(fx.base, "seq.db"));
  const info = (id: string) => ({ callId: id, root: "/w", session: "s", tool: "write_file", cap: 1 << 20 });
  const file = (n: string) => ({ target: { rel: "a.txt" }, before: Buffer.from(n), afterSha: null });
  for (const id of ["c1", "c2", "c3"]) await store.journal(info(id)).keep([file(id)]);
  const seqs = store.list("/w", "s", 10).map((c) => c.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => b - a),
    "newest first",
  );
  assert.equal(new Set(seqs).size, 3);
  assert.deepEqual(
    store.list("/w", "s", 10).map((c) => c.callId),
    ["c3", "c2", "c1"],
  );
  store.close();
});
