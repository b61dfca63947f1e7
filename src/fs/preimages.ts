// The undo store: for every file a latch write call changed, the content it replaced, so `undo` can
// put back those exact bytes. Kept in latch.db (migrations 6 and 9, src/fs/db.ts) beside the read ledger:
// undo_calls (one row per write call: its id, workspace root, session, tool), undo_files (per file:
// the sha256 before and after, null for no file) and undo_blobs (the replaced contents, once per
// root and sha256, deflated when that is smaller). A write keeps its pre-images before its rename, in
// one transaction made durable before the rename, so a write that lands always has them: the commit
// itself is not synced (synchronous=NORMAL, as the ledger's), then the WAL file is fdatasynced on the
// thread pool (walSynced), so the sync overlaps the write's own (temp file, decision) instead of
// blocking this thread for milliseconds. Each root's blobs are capped: the oldest go first, and an
// undo that needs one says so. What a root's blobs take and how many calls it has are kept as running
// totals (undo_roots, migration 10), changed in the write's transaction, so no write counts them again:
// counting read every blob of the root (7 ms at 22,000 blobs).
import type Database from "better-sqlite3";
import { closeSync, constants, fdatasync, openSync } from "node:fs";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { openStateDb } from "./db.js";
import { sha256 } from "./text.js";
import { whileBusy } from "./sqlite-busy.js";

/** The newest calls kept per root; older ones go with their files (a fixed overhead per call). */
const MAX_CALLS = 20_000;
/** Old calls go this many at a time, so not every write at the limit deletes rows: a root may hold this many more. */
const PRUNE_BATCH = 64;
/**
 * An eviction goes down to this share of the cap: evicting lists the root's blobs by age, so at the cap
 * it runs once per eighth of the cap stored, not at every write.
 */
const EVICT_TO = 7 / 8;

/** Why a file's earlier content was not kept as a blob. */
type NotKept = "streamed" | "too-large";

/** One file of a write, as the write path hands it over under the lock, before its rename. */
export interface PreImage {
  target: { rel: string };
  /** The replaced content (null: no file); or only its hash, where the bytes are not kept (`why`). */
  before: Buffer | null | { sha256: string; size: number; why: NotKept };
  /** sha256 of what the write leaves (null: the file is removed). */
  afterSha: string | null;
  /** sha256 of `before`'s bytes, where the write hashed them already (else it is hashed here). */
  beforeSha?: string | null;
}

/**
 * What the write path calls (MutationContext.journal). keep() commits the rows, and its promise
 * resolves once they are durable; it rejects (or throws) when they cannot be kept: nothing may be
 * renamed then. A write awaits it right before its rename.
 */
export interface Journal {
  keep(files: PreImage[]): Promise<void>;
}

export interface UndoFile {
  rel: string;
  beforeSha: string | null;
  beforeSize: number | null;
  /** Why no blob was kept for beforeSha (null: one was, unless evicted since). */
  note: NotKept | null;
  afterSha: string | null;
}

export interface UndoCall {
  seq: number;
  callId: string;
  session: string;
  tool: string;
  at: number;
  files: UndoFile[];
}

export interface CallInfo {
  callId: string;
  root: string;
  session: string;
  tool: string;
  cap: number;
}

export class PreImages {
  private readonly db: Database.Database;
  private readonly stmts: Record<string, Database.Statement>;
  private readonly maxCalls: number;

  /** The WAL file that keep() syncs; none when the database is not in WAL mode (each commit is synced then). */
  private readonly wal: string | undefined;
  /** A descriptor of it, opened at the first keep() and held until close() and the syncs still running. */
  private walFd: number | undefined;
  private syncsRunning = 0;
  private closed = false;
  /** keep() in a transaction, made once: better-sqlite3 builds a transaction's wrappers anew at each db.transaction(). */
  private readonly keepTxn: Database.Transaction<(info: CallInfo, files: PreImage[]) => UndoFile[]>;

  /** Whether close() closes the connection: not one borrowed (`opts.db`), which its owner closes. */
  private readonly ownsDb: boolean;

  /**
   * `db`: a connection to `file` already open (the ledger's, in a host), used as it is and left open by
   * close(). `maxCalls` is for tests: a limit small enough to reach.
   */
  constructor(
    readonly file: string,
    opts: { maxCalls?: number; db?: Database.Database } = {},
  ) {
    this.maxCalls = opts.maxCalls ?? MAX_CALLS;
    this.ownsDb = opts.db === undefined;
    this.db = opts.db ?? openStateDb(file);
    // A write's pre-images must be on disk before its rename. In WAL mode a commit is the frames
    // appended to the WAL file, so an fdatasync of that file after the commit makes it durable (the
    // sync is of the file, whichever descriptor wrote). A checkpoint meanwhile syncs the WAL before
    // copying it and the database after, so frames it moves are durable too. Elsewhere (a file system
    // without WAL support) this connection syncs each commit itself (in a host, the ledger's too: one connection).
    if (this.db.pragma("journal_mode", { simple: true }) === "wal") this.wal = `${file}-wal`;
    else this.db.pragma("synchronous = FULL");
    const q = (sql: string) => this.db.prepare(sql);
    this.stmts = {
      newCall: q(
        "INSERT INTO undo_calls (call_id, root, session, tool, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (call_id) DO NOTHING RETURNING seq",
      ),
      callSeq: q("SELECT seq FROM undo_calls WHERE call_id = ?"),
      totals: q(
        "INSERT INTO undo_roots (root, bytes, calls) VALUES (?, ?, ?) ON CONFLICT (root) DO UPDATE SET bytes = bytes + excluded.bytes, calls = calls + excluded.calls RETURNING bytes, calls",
      ),
      nextN: q("SELECT coalesce(max(n) + 1, 0) AS n FROM undo_files WHERE seq = ?"),
      file: q(
        "INSERT INTO undo_files (seq, n, rel, before_sha, before_size, note, after_sha) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      touch: q("UPDATE undo_blobs SET last_seq = ? WHERE root = ? AND sha256 = ?"),
      blob: q(
        "INSERT INTO undo_blobs (root, sha256, size, deflated, data, last_seq) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
      ),
      used: q("SELECT coalesce(sum(length(data)), 0) AS bytes, count(*) AS blobs FROM undo_blobs WHERE root = ?"),
      byAge: q("SELECT sha256, length(data) AS len, last_seq FROM undo_blobs WHERE root = ? ORDER BY last_seq"),
      evict: q("DELETE FROM undo_blobs WHERE root = ? AND sha256 = ?"),
      oldCalls: q("SELECT seq FROM undo_calls WHERE root = ? ORDER BY seq LIMIT ?"),
      less: q("UPDATE undo_roots SET bytes = bytes - ?, calls = calls - ? WHERE root = ?"),
      dropFiles: q("DELETE FROM undo_files WHERE seq = ?"),
      dropCall: q("DELETE FROM undo_calls WHERE seq = ?"),
      getBlob: q("SELECT deflated, data FROM undo_blobs WHERE root = ? AND sha256 = ?"),
      hasBlob: q("SELECT 1 FROM undo_blobs WHERE root = ? AND sha256 = ?"),
      byId: q("SELECT seq, call_id, session, tool, at FROM undo_calls WHERE root = ? AND call_id = ?"),
      since: q(
        "SELECT seq, call_id, session, tool, at FROM undo_calls WHERE root = ? AND session = ? AND seq >= ? ORDER BY seq DESC",
      ),
      list: q(
        "SELECT seq, call_id, session, tool, at FROM undo_calls WHERE root = ? AND (? IS NULL OR session = ?) ORDER BY seq DESC LIMIT ?",
      ),
      files: q("SELECT rel, before_sha, before_size, note, after_sha FROM undo_files WHERE seq = ? ORDER BY n"),
    };
    this.keepTxn = this.db.transaction((info: CallInfo, files: PreImage[]) => this.keep(info, files));
  }

  /** The journal of one call: every keep() of it lands under its id; the hashes kept are reported to `onKept`. */
  journal(info: CallInfo, onKept?: (files: UndoFile[]) => void): Journal {
    return {
      keep: async (files) => {
        const kept = whileBusy(() => this.keepTxn.immediate(info, files));
        await this.walSynced();
        onKept?.(kept);
      },
    };
  }

  /** fdatasync the WAL file on the thread pool: every commit made so far (this one's too) is durable once it resolves. */
  private walSynced(): Promise<void> {
    if (this.wal === undefined) return Promise.resolve();
    // Opened by name after the first commit and held: while this connection is open SQLite keeps this
    // WAL file (it is removed only at the last close, and a checkpoint rewrites it in place), so the
    // descriptor holds the frames just written, each time.
    const fd = (this.walFd ??= openSync(this.wal, constants.O_RDONLY));
    this.syncsRunning++;
    return new Promise((resolve, reject) =>
      fdatasync(fd, (err) => {
        this.syncsRunning--;
        this.closeWal();
        if (err) reject(err);
        else resolve();
      }),
    );
  }

  /** Once closed, the WAL's descriptor goes when no sync uses it (its number could name another file by then). */
  private closeWal(): void {
    if (!this.closed || this.syncsRunning > 0 || this.walFd === undefined) return;
    closeSync(this.walFd);
    this.walFd = undefined;
  }

  private keep(info: CallInfo, files: PreImage[]): UndoFile[] {
    const fresh = this.stmts.newCall.get(info.callId, info.root, info.session, info.tool, Date.now()) as
      { seq: number } | undefined;
    const seq = fresh?.seq ?? (this.stmts.callSeq.get(info.callId) as { seq: number }).seq;
    // A new call has no files yet; one that keeps again (apply_patch's later steps) numbers on.
    let n = fresh ? 0 : (this.stmts.nextN.get(seq) as { n: number }).n;
    const out: UndoFile[] = [];
    let stored = 0;
    for (const f of files) {
      const row = this.preImage(info, seq, f.before, f.beforeSha ?? undefined);
      stored += row.stored;
      this.stmts.file.run(seq, n++, f.target.rel, row.beforeSha, row.beforeSize, row.note, f.afterSha);
      out.push({
        rel: f.target.rel,
        beforeSha: row.beforeSha,
        beforeSize: row.beforeSize,
        note: row.note,
        afterSha: f.afterSha,
      });
    }
    if (stored === 0 && !fresh) return out; // nothing added: the totals stand
    const total = this.stmts.totals.get(info.root, stored, fresh ? 1 : 0) as { bytes: number; calls: number };
    if (total.bytes > info.cap) this.evict(info.root, seq, total.bytes, Math.floor(info.cap * EVICT_TO));
    if (total.calls > this.maxCalls + PRUNE_BATCH) this.prune(info.root, total.calls - this.maxCalls);
    return out;
  }

  /** Store one replaced content (once per root and hash; a stored one is only marked as used again). */
  private preImage(
    info: CallInfo,
    seq: number,
    before: PreImage["before"],
    known?: string,
  ): Pick<UndoFile, "beforeSha" | "beforeSize" | "note"> & { stored: number } {
    if (before === null) return { beforeSha: null, beforeSize: null, note: null, stored: 0 };
    if (!Buffer.isBuffer(before))
      return { beforeSha: before.sha256, beforeSize: before.size, note: before.why, stored: 0 };
    const sha = known ?? sha256(before);
    if (before.length > info.cap) return { beforeSha: sha, beforeSize: before.length, note: "too-large", stored: 0 };
    let stored = 0;
    if (this.stmts.touch.run(seq, info.root, sha).changes === 0) {
      // Level 1, in the write's transaction: 2–3× faster than level 6 on source files, for 10–20% more
      // bytes (bench/edit-parts.ts: 16 KB in ~60 µs against ~125–165).
      const deflated = before.length > 64 ? deflateRawSync(before, deflateFor(before.length)) : undefined;
      const smaller = deflated !== undefined && deflated.length < before.length;
      const data = smaller ? deflated : before;
      // DO NOTHING when another process stored it meanwhile: then nothing was added here.
      if (this.stmts.blob.run(info.root, sha, before.length, smaller ? 1 : 0, data, seq).changes > 0)
        stored = data.length;
    }
    return { beforeSha: sha, beforeSize: before.length, note: null, stored };
  }

  /**
   * The root's blobs, least recently used first, until they take `target` bytes or less; never those
   * this call (`seq`) uses, which its undo needs.
   */
  private evict(root: string, seq: number, bytes: number, target: number): void {
    let freed = 0;
    for (const r of this.stmts.byAge.all(root) as { sha256: string; len: number; last_seq: number }[]) {
      if (bytes - freed <= target) break;
      if (r.last_seq === seq) continue;
      this.stmts.evict.run(root, r.sha256);
      freed += r.len;
    }
    this.stmts.less.run(freed, 0, root);
  }

  /** The root's `count` oldest calls, with their files (their blobs stay until evicted: another call may use them). */
  private prune(root: string, count: number): void {
    const old = this.stmts.oldCalls.all(root, count) as { seq: number }[];
    for (const { seq } of old) {
      this.stmts.dropFiles.run(seq);
      this.stmts.dropCall.run(seq);
    }
    this.stmts.less.run(0, old.length, root);
  }

  /** A replaced content, or undefined when it was never kept or was evicted. */
  blob(root: string, sha: string): Buffer | undefined {
    const row = whileBusy(() => this.stmts.getBlob.get(root, sha)) as { deflated: number; data: Buffer } | undefined;
    if (!row) return undefined;
    const data = row.deflated ? inflateRawSync(row.data) : row.data;
    // A blob whose bytes do not hash to its key is not put back: the undo says it is gone.
    return sha256(data) === sha ? data : undefined;
  }

  hasBlob(root: string, sha: string): boolean {
    return whileBusy(() => this.stmts.hasBlob.get(root, sha)) !== undefined;
  }

  /** One call of this root, with its files; undefined if none has that id (a read, or an unknown id). */
  call(root: string, callId: string): UndoCall | undefined {
    const row = whileBusy(() => this.stmts.byId.get(root, callId)) as CallRow | undefined;
    return row ? this.withFiles(row) : undefined;
  }

  /** The session's write calls from `callId` on, newest first (the order they are undone in). */
  since(root: string, session: string, callId: string): UndoCall[] | undefined {
    const first = this.call(root, callId);
    if (!first) return undefined;
    const rows = whileBusy(() => this.stmts.since.all(root, session, first.seq)) as CallRow[];
    return rows.map((r) => this.withFiles(r));
  }

  /** The newest write calls of this root (of one session, if given), newest first. */
  list(root: string, session: string | undefined, limit: number): UndoCall[] {
    const s = session ?? null;
    const rows = whileBusy(() => this.stmts.list.all(root, s, s, limit)) as CallRow[];
    return rows.map((r) => this.withFiles(r));
  }

  /** What this root's pre-images take in the store (bytes as stored, after deflate), and how many: counted, not the running total. */
  used(root: string): { bytes: number; blobs: number } {
    return whileBusy(() => this.stmts.used.get(root)) as { bytes: number; blobs: number };
  }

  close(): void {
    try {
      if (this.ownsDb) this.db.close();
    } catch {
      // a state dir gone already: nothing is left to keep
    }
    this.closed = true;
    this.closeWal();
  }

  private withFiles(r: CallRow): UndoCall {
    const files = (whileBusy(() => this.stmts.files.all(r.seq)) as FileRow[]).map((f) => ({
      rel: f.rel,
      beforeSha: f.before_sha,
      beforeSize: f.before_size,
      note: f.note,
      afterSha: f.after_sha,
    }));
    return { seq: r.seq, callId: r.call_id, session: r.session, tool: r.tool, at: r.at, files };
  }
}

/**
 * Level 1, with a window and hash no larger than the content needs: the same bytes out as zlib's
 * defaults while the content fits the window (and inflateRaw's default window reads any smaller one),
 * from a state of ~20 KB instead of ~270 KB, which zlib allocates and frees at every call: a 3.6 KB
 * file's deflate took ~100 µs of an edit in the server with the defaults.
 */
function deflateFor(size: number): { level: number; windowBits: number; memLevel: number } {
  // A window of 2^bits keeps 262 bytes free for its look-ahead; raw deflate takes 9 to 15.
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(size + 262))));
  return { level: 1, windowBits, memLevel: Math.min(8, windowBits - 6) };
}

interface CallRow {
  seq: number;
  call_id: string;
  session: string;
  tool: string;
  at: number;
}

interface FileRow {
  rel: string;
  before_sha: string | null;
  before_size: number | null;
  note: NotKept | null;
  after_sha: string | null;
}
