// Each run's policy-log head (the last line's hash and the line count), kept in the state database as
// the log grows, so `latch log verify` can tell a log that was re-chained from line 1, or cut, from
// the one latch wrote: a chain alone verifies whoever rewrote it. A log retention removes keeps its
// head, marked pruned, so verify can still say which runs went and that nothing else did.
import type Database from "better-sqlite3";
import path from "node:path";
import { openStateDb } from "../fs/db.js";

/**
 * How long keeping a head waits for another process's lock on the database. It runs inside the log's
 * sync, on the one thread every session shares, so it waits less than the ledger; a head not kept
 * refuses calls until the next one keeps it (RunLog).
 */
const HEAD_BUSY_MS = 1000;

export interface LogHead {
  head: string;
  lines: number;
  updated_at: string;
  /** When retention removed the file (the head stays); null while the file is kept. */
  pruned_at: string | null;
}

export interface FolderHead extends LogHead {
  file: string;
}

export class LogHeads {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly ownsDb: boolean;
  /** A borrowed connection's wait, shortened for each write here and set back after (null: this one's own, always short). */
  private readonly wait: { short: Database.Statement; back: Database.Statement } | null;

  /**
   * `db`: a connection to `dbFile` already open (the ledger's, in a host), used as it is and left open
   * by close(); its own wait for a busy database is kept, save in this class's writes.
   */
  constructor(dbFile: string, opts: { readonly?: boolean; db?: Database.Database } = {}) {
    this.db = opts.db ?? openStateDb(dbFile, { readonly: opts.readonly });
    if (opts.db) {
      const waited = this.db.pragma("busy_timeout", { simple: true }) as number;
      this.wait = {
        short: this.db.prepare(`PRAGMA busy_timeout = ${HEAD_BUSY_MS}`),
        back: this.db.prepare(`PRAGMA busy_timeout = ${waited}`),
      };
    } else {
      this.db.pragma(`busy_timeout = ${HEAD_BUSY_MS}`);
      this.wait = null;
    }
    this.ownsDb = opts.db === undefined;
    this.upsert = opts.readonly
      ? this.db.prepare("SELECT 1")
      : this.db.prepare(
          "INSERT INTO log_heads (file, head, lines, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(file) DO UPDATE SET head = excluded.head, lines = excluded.lines, updated_at = excluded.updated_at",
        );
  }

  record(file: string, head: string, lines: number): void {
    this.briefly(() => this.upsert.run(file, head, lines, new Date().toISOString()));
  }

  /** Retention is about to remove `file`: its head stays, marked pruned (before the unlink, so a crash between leaves a mark, never an unexplained gap). */
  markPruned(file: string): void {
    this.briefly(() =>
      this.db.prepare("UPDATE log_heads SET pruned_at = ? WHERE file = ?").run(new Date().toISOString(), file),
    );
  }

  /** A write here waits HEAD_BUSY_MS at most for a busy database, on a borrowed connection too. */
  private briefly(write: () => unknown): void {
    if (!this.wait) {
      write();
      return;
    }
    this.wait.short.get();
    try {
      write();
    } finally {
      this.wait.back.get();
    }
  }

  get(file: string): LogHead | undefined {
    if (!this.hasTable()) return undefined;
    return this.db
      .prepare(`SELECT head, lines, updated_at, ${this.prunedCol()} FROM log_heads WHERE file = ?`)
      .get(file) as LogHead | undefined;
  }

  /** The heads of the logs directly in `dir`, by file name. */
  inFolder(dir: string): FolderHead[] {
    if (!this.hasTable()) return [];
    const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
    const rows = this.db
      .prepare(
        `SELECT file, head, lines, updated_at, ${this.prunedCol()} FROM log_heads WHERE substr(file, 1, ?) = ? ORDER BY file`,
      )
      .all(prefix.length, prefix) as FolderHead[];
    return rows.filter((r) => !r.file.slice(prefix.length).includes(path.sep));
  }

  close(): void {
    if (this.ownsDb) this.db.close();
  }

  private hasTable(): boolean {
    return (
      this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'log_heads'").get() !== undefined
    );
  }

  /** A database opened read-only as it is may predate the pruned_at column. */
  private prunedCol(): string {
    const cols = this.db.prepare("PRAGMA table_info(log_heads)").all() as { name: string }[];
    return cols.some((c) => c.name === "pruned_at") ? "pruned_at" : "NULL AS pruned_at";
  }
}
