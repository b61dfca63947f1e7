// Each run's policy-log head (the last line's hash and the line count), kept in the state database as
// the log grows, so `latch log verify` can tell a log that was re-chained from line 1, or cut, from
// the one latch wrote: a chain alone verifies whoever rewrote it.
import type Database from "better-sqlite3";
import { openStateDb } from "../fs/db.js";

export interface LogHead {
  head: string;
  lines: number;
  updated_at: string;
}

export class LogHeads {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;

  constructor(dbFile: string, opts: { readonly?: boolean } = {}) {
    this.db = openStateDb(dbFile, { readonly: opts.readonly });
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
