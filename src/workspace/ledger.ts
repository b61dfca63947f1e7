// The read ledger behind read-before-write: per session and canonical path, which content (sha256)
// the session has seen, and whether it saw all of it. Kept in SQLite (WAL) so that every latch
// process on the machine shares it. Only a session's latest read of a path counts: a write is based
// on it (its `base`, taken when the call starts), so a read of a newer version retires the older one.
import Database from "better-sqlite3";

export type ReadKind = "full" | "range";

const MARKER_TTL_MS = 24 * 60 * 60 * 1000;

export class Ledger {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly lookup: Database.Statement;
  private readonly forget: Database.Statement;
  private readonly any: Database.Statement;
  private readonly newest: Database.Statement;
  private readonly forgetOthers: Database.Statement;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 10000");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(`CREATE TABLE IF NOT EXISTS reads (
      session TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
      full INTEGER NOT NULL, at INTEGER NOT NULL,
      PRIMARY KEY (session, path, sha256))`);
    this.db.prepare("DELETE FROM reads WHERE at < ?").run(Date.now() - MARKER_TTL_MS);
    this.upsert = this.db.prepare(`INSERT INTO reads (session, path, sha256, full, at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (session, path, sha256) DO UPDATE SET full = max(full, excluded.full), at = excluded.at`);
    this.lookup = this.db.prepare(
      "SELECT max(full) AS full FROM reads WHERE session = ? AND path = ? AND sha256 = ? AND at >= ?",
    );
    this.forget = this.db.prepare("DELETE FROM reads WHERE session = ? AND path = ?");
    this.any = this.db.prepare("SELECT 1 FROM reads WHERE session = ? AND path = ? AND at >= ? LIMIT 1");
    this.newest = this.db.prepare(
      "SELECT sha256 FROM reads WHERE session = ? AND path = ? AND at >= ? ORDER BY at DESC, rowid DESC LIMIT 1",
    );
    this.forgetOthers = this.db.prepare("DELETE FROM reads WHERE session = ? AND path = ? AND sha256 <> ?");
  }

  /** Note that `session` read the content `sha` of `path`, whole or in part; its reads of other versions retire. */
  record(session: string, path: string, sha: string, kind: ReadKind): void {
    this.db.transaction(() => {
      this.forgetOthers.run(session, path, sha);
      this.upsert.run(session, path, sha, kind === "full" ? 1 : 0, Date.now());
    })();
  }

  /** The content `session` last read (or wrote) of `path`: what a write starting now is based on. */
  latest(session: string, path: string): string | undefined {
    const row = this.newest.get(session, path, Date.now() - MARKER_TTL_MS) as { sha256: string } | undefined;
    return row?.sha256;
  }

  /** What `session` has seen of exactly this content of `path`, if anything (markers expire after 24 h). */
  seen(session: string, path: string, sha: string): ReadKind | undefined {
    const row = this.lookup.get(session, path, sha, Date.now() - MARKER_TTL_MS) as { full: number | null };
    if (row.full === null) return undefined;
    return row.full ? "full" : "range";
  }

  /** Whether `session` has read any version of `path` (to tell "never read" from "read, then changed"). */
  readAnyVersion(session: string, path: string): boolean {
    return this.any.get(session, path, Date.now() - MARKER_TTL_MS) !== undefined;
  }

  /** After a session's own mutation, its marker moves to the new content. */
  move(session: string, path: string, sha: string, kind: ReadKind): void {
    this.db.transaction(() => {
      this.forget.run(session, path);
      this.upsert.run(session, path, sha, kind === "full" ? 1 : 0, Date.now());
    })();
  }

  /** A session's markers for `path`, gone (the file was deleted, or moved away, by the session). */
  drop(session: string, path: string): void {
    this.forget.run(session, path);
  }

  close(): void {
    this.db.close();
  }
}
