// The one way latch opens its state database (latch.db: the read ledger, pending approvals, the
// policy-log heads). Every opener gets the same setup: a 0600 file (SQLite gives its -wal and -shm
// files the database's own mode), WAL, the bounded busy wait, and the numbered migrations below,
// recorded in `PRAGMA user_version`. A database made by a newer latch (a higher version) is refused,
// never written to: this latch cannot know what the newer schema means.
import Database from "better-sqlite3";
import { chmodSync, closeSync, constants, openSync, statSync } from "node:fs";
import { ToolError } from "../errors.js";
import { LEDGER_BUSY_MS, whileBusy } from "./sqlite-busy.js";

interface Migration {
  /** What it adds, for the reader. */
  what: string;
  up(db: Database.Database): void;
}

/**
 * Migration N (1-based) brings a database from version N-1 to N. Append only; never edit one that
 * shipped. 1–4 are the schema as latch made it before versions were kept (user_version 0), so they
 * tolerate finding their table or column already there; from 5 on, a migration may assume the ones
 * before it ran.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    what: "the read ledger",
    up: (db) =>
      db.exec(`CREATE TABLE IF NOT EXISTS reads (
      session TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
      full INTEGER NOT NULL, at INTEGER NOT NULL,
      PRIMARY KEY (session, path, sha256))`),
  },
  {
    what: "the approval queue",
    up: (db) =>
      db.exec(`CREATE TABLE IF NOT EXISTS approvals (
      id TEXT PRIMARY KEY, tool TEXT NOT NULL, session TEXT NOT NULL, reason TEXT NOT NULL,
      args TEXT NOT NULL, diff TEXT, diff_note TEXT, state TEXT NOT NULL,
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, pid INTEGER NOT NULL)`),
  },
  {
    what: "an approval's risk, scope and content hashes (approvals.meta)",
    up: (db) => {
      const cols = db.prepare("PRAGMA table_info(approvals)").all() as { name: string }[];
      if (!cols.some((c) => c.name === "meta")) db.exec("ALTER TABLE approvals ADD COLUMN meta TEXT");
    },
  },
  {
    what: "the policy-log heads",
    up: (db) =>
      db.exec(
        "CREATE TABLE IF NOT EXISTS log_heads (file TEXT PRIMARY KEY, head TEXT NOT NULL, lines INTEGER NOT NULL, updated_at TEXT NOT NULL)",
      ),
  },
  {
    what: "when retention pruned a policy log (log_heads.pruned_at): its head stays, so verify can say what went",
    up: (db) => db.exec("ALTER TABLE log_heads ADD COLUMN pruned_at TEXT"),
  },
  {
    what: "the undo store: each write call's files (undo_calls, undo_files) and the replaced contents, by sha256 (undo_blobs)",
    up: (db) =>
      db.exec(`CREATE TABLE undo_calls (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL UNIQUE, root TEXT NOT NULL,
      session TEXT NOT NULL, tool TEXT NOT NULL, at INTEGER NOT NULL);
    CREATE INDEX undo_calls_by_root ON undo_calls (root, session, seq);
    CREATE TABLE undo_files (
      seq INTEGER NOT NULL, n INTEGER NOT NULL, rel TEXT NOT NULL, before_sha TEXT, before_size INTEGER,
      note TEXT, after_sha TEXT, PRIMARY KEY (seq, n));
    CREATE TABLE undo_blobs (
      root TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, deflated INTEGER NOT NULL,
      data BLOB NOT NULL, last_seq INTEGER NOT NULL, PRIMARY KEY (root, sha256));
    CREATE INDEX undo_blobs_by_age ON undo_blobs (root, last_seq);`),
  },
  {
    what: "the journal of half-done steps (reserved markers, moves, made folders), for crash recovery",
    up: (db) =>
      db.exec(`CREATE TABLE IF NOT EXISTS journal (
      id INTEGER PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL,
      session TEXT, key TEXT, sha TEXT, data TEXT NOT NULL, at INTEGER NOT NULL)`),
  },
  {
    what: "the pins of attached servers' tools (src/gateway/pins.ts)",
    up: (db) =>
      db.exec(`CREATE TABLE IF NOT EXISTS tool_pins (
      server TEXT NOT NULL, tool TEXT NOT NULL, sha256 TEXT NOT NULL, definition TEXT NOT NULL,
      approved_at TEXT NOT NULL, PRIMARY KEY (server, tool))`),
  },
  {
    what: "fewer undo pages per write: two indexes dropped (by root, by age), undo_calls' seq a plain rowid (no sqlite_sequence row), undo_files kept by its key alone (WITHOUT ROWID)",
    // Each write paid a page for each index, for AUTOINCREMENT's counter and for undo_files' rowid beside
    // its key, for queries that run only at undo or eviction: seq is the rowid, so a newest-first listing
    // walks the table in order, and eviction sorts one root's blobs (found by their key) only over its
    // cap. A plain rowid is max + 1: seq still only grows, since pruning never removes the newest call.
    up: (db) =>
      db.exec(`DROP INDEX undo_blobs_by_age;
    CREATE TABLE undo_calls_new (
      seq INTEGER PRIMARY KEY, call_id TEXT NOT NULL UNIQUE, root TEXT NOT NULL,
      session TEXT NOT NULL, tool TEXT NOT NULL, at INTEGER NOT NULL);
    INSERT INTO undo_calls_new SELECT seq, call_id, root, session, tool, at FROM undo_calls;
    DROP TABLE undo_calls;
    ALTER TABLE undo_calls_new RENAME TO undo_calls;
    CREATE TABLE undo_files_new (
      seq INTEGER NOT NULL, n INTEGER NOT NULL, rel TEXT NOT NULL, before_sha TEXT, before_size INTEGER,
      note TEXT, after_sha TEXT, PRIMARY KEY (seq, n)) WITHOUT ROWID;
    INSERT INTO undo_files_new SELECT seq, n, rel, before_sha, before_size, note, after_sha FROM undo_files;
    DROP TABLE undo_files;
    ALTER TABLE undo_files_new RENAME TO undo_files;`),
  },
  {
    what: "the undo store's running totals per root (undo_roots: the bytes its blobs take, its calls), counted once here",
    // A write compared what a root's blobs take with its cap by reading every blob of the root at
    // every 64th write (7 ms at 22,000 blobs) and at each write once over the cap; the totals now
    // change in the write's own transaction (src/fs/preimages.ts).
    up: (db) =>
      db.exec(`CREATE TABLE undo_roots (
      root TEXT PRIMARY KEY, bytes INTEGER NOT NULL, calls INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO undo_roots (root, bytes, calls)
      SELECT root, sum(bytes), sum(calls) FROM (
        SELECT root, length(data) AS bytes, 0 AS calls FROM undo_blobs
        UNION ALL SELECT root, 0, 1 FROM undo_calls)
      GROUP BY root;`),
  },
];

/** The schema version this latch writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Open latch.db at `file`, set up and migrated to SCHEMA_VERSION. `readonly` opens an existing file
 * as it is (no setup, no migration) for readers such as `latch log verify`. Throws ESTATE for a
 * database of a newer latch; SQLite and file-system faults are thrown as they are (the ledger names
 * them, ledgerError).
 */
export function openStateDb(file: string, opts: { readonly?: boolean } = {}): Database.Database {
  if (!opts.readonly) createOwnerOnly(file);
  const db = new Database(file, {
    readonly: opts.readonly ?? false,
    fileMustExist: opts.readonly ?? false,
    timeout: LEDGER_BUSY_MS,
  });
  try {
    if (opts.readonly) {
      refuseNewer(db, file);
      return db;
    }
    const version = refuseNewer(db, file);
    // What must survive a crash is synced elsewhere (the policy log; a write's file): NORMAL is enough.
    // Set first: a new database's switch to WAL is then written with NORMAL's syncs, not FULL's (one
    // fsync less of each of its files, a few ms of a fresh state dir's start on a busy disk).
    db.pragma("synchronous = NORMAL");
    whileBusy(() => db.pragma("journal_mode = WAL"));
    if (version < SCHEMA_VERSION) whileBusy(() => migrate(db, file));
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** The database's version; throws ESTATE when it is newer than this latch's. */
function refuseNewer(db: Database.Database, file: string): number {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION)
    throw new ToolError(
      "ESTATE",
      `The state database \`${file}\` was made by a newer latch (schema version ${version}; this latch knows up to ${SCHEMA_VERSION}). Run the newer latch, or start this one with another --state-dir.`,
    );
  return version;
}

/**
 * Apply the missing migrations in one write transaction, so two processes opening an old database
 * at once cannot both apply one (the second finds the version already raised).
 */
function migrate(db: Database.Database, file: string): void {
  db.transaction(() => {
    const from = refuseNewer(db, file);
    for (let v = from; v < SCHEMA_VERSION; v++) MIGRATIONS[v].up(db);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** Create the file for this user alone, never through a link; narrow one of ours that is wider. */
function createOwnerOnly(file: string): void {
  closeSync(openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
  const st = statSync(file);
  if ((st.mode & 0o777) !== 0o600 && st.uid === process.getuid?.()) chmodSync(file, 0o600);
}
