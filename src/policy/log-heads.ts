// Each run's policy-log head (the last line's hash and the line count), kept in the state database as
// the log grows, so `latch log verify` can tell a log that was re-chained from line 1, or cut, from
// the one latch wrote: a chain alone verifies whoever rewrote it.
import Database from "better-sqlite3";
import { LEDGER_BUSY_MS, whileBusy } from "../fs/sqlite-busy.js";

export interface LogHead {
  head: string;
  lines: number;
  updated_at: string;
}

export class LogHeads {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;

  constructor(dbFile: string, opts: { readonly?: boolean } = {}) {
    // The same bounded wait as the ledger's: many short-lived `latch call` processes share this file.
    this.db = new Database(dbFile, {
      readonly: opts.readonly ?? false,
      fileMustExist: opts.readonly ?? false,
      timeout: LEDGER_BUSY_MS,
    });
    if (!opts.readonly) {
      const setup = this.db;
      whileBusy(() => setup.pragma("journal_mode = WAL"));
      // The log file itself is synced; this copy of its head needs no fsync of its own per line.
      this.db.pragma("synchronous = NORMAL");
      whileBusy(() =>
        setup.exec(
          "CREATE TABLE IF NOT EXISTS log_heads (file TEXT PRIMARY KEY, head TEXT NOT NULL, lines INTEGER NOT NULL, updated_at TEXT NOT NULL)",
        ),
      );
    }
    this.upsert = opts.readonly
      ? this.db.prepare("SELECT 1")
      : this.db.prepare(
          "INSERT INTO log_heads (file, head, lines, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(file) DO UPDATE SET head = excluded.head, lines = excluded.lines, updated_at = excluded.updated_at",
        );
  }

  record(file: string, head: string, lines: number): void {
    this.upsert.run(file, head, lines, new Date().toISOString());
  }

  get(file: string): LogHead | undefined {
    const has = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'log_heads'").get();
    if (!has) return undefined;
    return this.db.prepare("SELECT head, lines, updated_at FROM log_heads WHERE file = ?").get(file) as
      LogHead | undefined;
  }

  close(): void {
    this.db.close();
  }
}
