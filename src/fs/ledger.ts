// The read ledger behind read-before-write: per session and canonical path, which content (sha256)
// the session has seen, and whether it saw all of it. Kept in SQLite (WAL) so that every latch
// process on the machine shares it (opened by openStateDb, src/fs/db.ts). Only a session's latest read of a path counts: a write is based
// on it (its `base`, taken when the call starts), so a read of a newer version retires the older one.
// A write reserves its new marker before the rename and settles it after (mutate.ts), so the file and
// the ledger change as one step from the caller's view. Database faults become ToolErrors that name
// the file and the fix (ledgerError); a busy database is waited for at most LEDGER_BUSY_MS.
import type Database from "better-sqlite3";
import { openStateDb } from "./db.js";
import { Journal, type MoveStep, type WriteOf } from "./journal.js";
import { showName } from "./names.js";
import { trashIn } from "./same-file.js";
import { LEDGER_BUSY_MS, isBusy, whileBusy } from "./sqlite-busy.js";
import { statfsSync } from "node:fs";
import path from "node:path";
import { ToolError, errnoCode } from "../errors.js";

export type ReadKind = "full" | "range";

const MARKER_TTL_MS = 24 * 60 * 60 * 1000;
/** The longest a read answered first waits for its ledger row (recordSoon): reads in that time share one commit. */
export const SOON_MS = 5;

/**
 * The key a path's markers are kept under. SQLite takes text as UTF-8, and under Node 24 a lone
 * surrogate (how latch holds a name byte that is not UTF-8, fs/names.ts) is bound as U+FFFD, so
 * `a\xfe` and `a\xfd` would share one marker (Node 20 and 22 keep them apart). Such paths, and every path with a
 * backslash (so that no plain path can equal a shown one), are kept in their shown form, one-to-one.
 */
function dbKey(p: string): string {
  return /[\\\uD800-\uDFFF]/.test(p) ? showName(p) : p;
}

/** A read to record: session, path key, sha256, whether whole (1) or in part (0), when. */
type Read = [session: string, key: string, sha: string, full: number, at: number];

export class Ledger {
  /**
   * The host's one connection to latch.db: the undo store and the log heads borrow it (create-host.ts),
   * so no commit of theirs empties this connection's page cache, as another connection's commit does.
   */
  readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly lookup: Database.Statement;
  private readonly forget: Database.Statement;
  private readonly any: Database.Statement;
  private readonly newest: Database.Statement;
  private readonly forgetOthers: Database.Statement;
  private readonly forgetOne: Database.Statement;
  /** session NUL path of markers dropped in memory because the database could not be updated. */
  private readonly dropped = new Set<string>();
  /** Steps a kill could leave half done (journal.ts): written first, cleared when done, recovered at open and before each write call. */
  readonly journal: Journal;
  /** Reads recorded with recordSoon, not in the database yet: written within SOON_MS, or before any other use. */
  private soon: Read[] = [];
  private soonTimer: NodeJS.Timeout | undefined;
  /**
   * The transactions, made once: better-sqlite3 builds a transaction's wrappers anew at each
   * db.transaction(), which with them cost each one ~9 µs more.
   */
  private readonly tx: {
    record: (reads: Read[]) => void;
    reserve: (session: string, key: string, path: string, sha: string, full: number, write?: WriteOf) => void;
    settle: (session: string, key: string, sha: string) => void;
    unreserve: (session: string, key: string, sha: string) => void;
  };

  constructor(readonly file: string) {
    let db: Database.Database | undefined;
    try {
      const opened = (this.db = db = openStateDb(file));
      whileBusy(() => opened.prepare("DELETE FROM reads WHERE at < ?").run(Date.now() - MARKER_TTL_MS));
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
      this.forgetOne = this.db.prepare("DELETE FROM reads WHERE session = ? AND path = ? AND sha256 = ?");
      // The trash beside latch.db: the state dir's (src/fs/same-file.ts).
      this.journal = new Journal(this.db, () => this.writeSoon(), trashIn(path.dirname(file)));
      this.tx = {
        record: opened.transaction((reads: Read[]) => {
          for (const [session, key, sha, full, at] of reads) {
            this.forgetOthers.run(session, key, sha);
            this.upsert.run(session, key, sha, full, at);
          }
        }),
        reserve: opened.transaction(
          (session: string, key: string, p: string, sha: string, full: number, write?: WriteOf) => {
            this.upsert.run(session, key, sha, full, Date.now());
            this.journal.marker(session, key, p, sha, write);
          },
        ),
        settle: opened.transaction((session: string, key: string, sha: string) => {
          this.forgetOthers.run(session, key, sha);
          this.journal.markerDone(session, key, sha, true);
        }),
        unreserve: opened.transaction((session: string, key: string, sha: string) => {
          this.forgetOne.run(session, key, sha);
          this.journal.markerDone(session, key, sha, false);
        }),
      };
    } catch (err) {
      try {
        db?.close();
      } catch {
        // already broken: the error below says why
      }
      throw ledgerError(err, file);
    }
    this.journal.recover();
  }

  /** Note that `session` read the content `sha` of `path`, whole or in part; its reads of other versions retire. */
  record(session: string, path: string, sha: string, kind: ReadKind): void {
    this.writeSoon();
    const key = dbKey(path);
    this.guard(() => this.tx.record([[session, key, sha, kind === "full" ? 1 : 0, Date.now()]]));
    this.dropped.delete(`${session}\0${key}`);
  }

  /**
   * `record`, after the read's answer has gone out (CallOptions.answerFirst): within SOON_MS, with
   * every read that waits in one transaction, or before anything else uses the ledger (this process's
   * next check, write, close), whichever is first. A client reading file after file has each batch
   * in one commit, not one each (~35 µs of a read's ~450 here). A fault then is not the read's: the
   * read is not recorded, and a write based on it asks for a fresh read (its own use of the ledger
   * says what is wrong); so does a read a kill took before its batch was written.
   */
  recordSoon(session: string, path: string, sha: string, kind: ReadKind): void {
    this.soon.push([session, dbKey(path), sha, kind === "full" ? 1 : 0, Date.now()]);
    this.soonTimer ??= setTimeout(() => this.writeSoon(), SOON_MS).unref();
  }

  private writeSoon(): void {
    clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
    if (this.soon.length === 0) return;
    // A session's latest read of a path is what counts (record retires the others): one row each.
    const latest = new Map<string, Read>();
    for (const r of this.soon) {
      const k = `${r[0]}\0${r[1]}`;
      const was = latest.get(k);
      latest.delete(k); // in the order of their latest read
      // The same content seen whole once stays seen whole, as the upsert keeps max(full).
      latest.set(k, was && was[2] === r[2] && was[3] > r[3] ? [r[0], r[1], r[2], was[3], r[4]] : r);
    }
    const reads = [...latest.values()];
    this.soon = [];
    try {
      this.tx.record(reads);
    } catch {
      return; // not recorded: see recordSoon
    }
    for (const [session, key] of reads) this.dropped.delete(`${session}\0${key}`);
  }

  /**
   * Forget what `session` saw of `path` (the file was deleted or moved away by the session, or a write's
   * marker could not be settled): in memory first, so this process's next write of it needs a fresh
   * read even when the database does not answer, then in the database.
   */
  drop(session: string, path: string): void {
    this.writeSoon();
    this.dropped.add(`${session}\0${dbKey(path)}`);
    try {
      this.forget.run(session, dbKey(path));
      this.dropped.delete(`${session}\0${dbKey(path)}`);
    } catch {
      // kept in memory until the session records a new read
    }
  }

  /** What `session` has seen of exactly this content of `path`, if anything (markers expire after 24 h). */
  seen(session: string, path: string, sha: string): ReadKind | undefined {
    this.writeSoon();
    if (this.dropped.has(`${session}\0${dbKey(path)}`)) return undefined;
    const row = this.guard(
      () => this.lookup.get(session, dbKey(path), sha, Date.now() - MARKER_TTL_MS) as { full: number | null },
    );
    if (row.full === null) return undefined;
    return row.full ? "full" : "range";
  }

  /** Whether `session` has read any version of `path` (to tell "never read" from "read, then changed"). */
  readAnyVersion(session: string, path: string): boolean {
    this.writeSoon();
    return this.guard(() => this.any.get(session, dbKey(path), Date.now() - MARKER_TTL_MS) !== undefined);
  }

  /** The content `session` last read (or wrote) of `path`: what a write starting now is based on. */
  latest(session: string, path: string): string | undefined {
    this.writeSoon();
    if (this.dropped.has(`${session}\0${dbKey(path)}`)) return undefined;
    const row = this.guard(
      () => this.newest.get(session, dbKey(path), Date.now() - MARKER_TTL_MS) as { sha256: string } | undefined,
    );
    return row?.sha256;
  }

  /**
   * Before a write's rename: the marker of the content about to be written, added beside the current
   * one and newest, so the write is based on it from the moment it lands. Throws (nothing written yet)
   * when the ledger cannot take it.
   */
  reserve(session: string, path: string, sha: string, kind: ReadKind, write?: WriteOf): void {
    this.writeSoon();
    // Journaled with it: a kill before settle() or unreserve() leaves a marker recovery resolves (journal.ts).
    this.guard(() => this.tx.reserve(session, dbKey(path), path, sha, kind === "full" ? 1 : 0, write));
  }

  /** After the rename: the reserved marker is the only one. */
  settle(session: string, path: string, sha: string): void {
    this.writeSoon();
    this.guard(() => this.tx.settle(session, dbKey(path), sha));
  }

  /** The rename did not happen: the reserved marker goes again. */
  unreserve(session: string, path: string, sha: string): void {
    this.writeSoon();
    this.guard(() => this.tx.unreserve(session, dbKey(path), sha));
  }

  /** Whether the session's last write of `path` was the call `call` from `before` to `after` (a retry of it is already applied). */
  applied(session: string, path: string, before: string, after: string, call: string): boolean {
    this.writeSoon();
    return this.guard(() => this.journal.applied(session, dbKey(path), before, after, call));
  }

  /** Journal a move before its link (journal.ts); throws a named fault (nothing moved) when the journal cannot take it. */
  beginMove(step: MoveStep): number {
    this.writeSoon();
    return this.guard(() => this.journal.move(step));
  }

  /** Journal the folders about to be made for `target` below `keep`; undefined when the journal cannot take it. */
  beginFolders(target: { abs: string; rel: string }, keep: string): number | undefined {
    this.writeSoon();
    try {
      return this.journal.folders(target, keep);
    } catch {
      return undefined; // the write goes on: a kill now could leave an empty folder, nothing worse
    }
  }

  close(): void {
    this.writeSoon();
    try {
      this.db.close();
    } catch {
      // closing a ledger whose file went away: nothing is left to keep
    }
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw ledgerError(err, this.file);
    }
  }
}

/**
 * A database or file-system fault of the ledger as a ToolError naming the file and the fix. Callers
 * say what it means for their call (mutate: nothing was written).
 */
function ledgerError(err: unknown, file: string): unknown {
  if (err instanceof ToolError) return err;
  const code = errnoCode(err) ?? "";
  const dir = path.dirname(file);
  const msg = err instanceof Error ? err.message : String(err);
  if (isBusy(err))
    return new ToolError(
      "ELEDGERBUSY",
      `The read ledger \`${file}\` stayed locked by another process for ${LEDGER_BUSY_MS / 1000} s. Retry in a moment; if it persists, find the process holding it (fuser ${file}).`,
    );
  if (
    code === "SQLITE_FULL" ||
    code === "ENOSPC" ||
    code === "EDQUOT" ||
    (code.startsWith("SQLITE_IOERR") && diskFull(dir))
  )
    return new ToolError(
      "ENOSPC",
      `The state dir \`${dir}\` is full: the read ledger \`${file}\` cannot grow. Free space on that disk (or start latch with another --state-dir), then retry.`,
    );
  if (code === "SQLITE_READONLY" || code.startsWith("SQLITE_READONLY_") || code === "EROFS")
    return new ToolError(
      "ESTATE",
      `The read ledger \`${file}\` is read-only (${msg}). Make \`${dir}\` and the files in it writable by this user, or start latch with another --state-dir.`,
    );
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT_"))
    return new ToolError(
      "ESTATE",
      `The read ledger \`${file}\` is not a valid database (${msg}). Move it (and any latch.db-wal, latch.db-shm beside it) out of the way; latch makes a new one and sessions read their files again.`,
    );
  if (code.startsWith("SQLITE_") || ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOTDIR", "EIO"].includes(code))
    return new ToolError(
      "ESTATE",
      `The read ledger \`${file}\` cannot be used (${code}: ${msg}). Check that \`${dir}\` is a writable folder of this user holding a valid latch.db, or start latch with another --state-dir.`,
    );
  return err;
}

/** Whether the disk holding `dir` has no room left (SQLite reports a full disk as an I/O error when growing its shared memory file). */
function diskFull(dir: string): boolean {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < 64 * 1024;
  } catch {
    return false;
  }
}
