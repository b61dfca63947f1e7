// The policy log: one JSON line per record, hash-chained. Created with O_EXCL and mode 0600 (an
// existing path is refused, never appended to). A write that fails (a full disk, a file-size limit)
// is cut back to the last whole line, so the chain stays whole and the next append tries again; a
// failed sync, or a cut that fails, breaks the log for good, and every later effect is blocked.
// Every record reaches the file (write(2)) before append returns, so it survives latch being killed.
// A "sync" record is also fdatasynced before append returns (a decision for a call that can change
// something); a "write" record (a read's decision, an outcome) is synced by the next sync record or
// within SYNC_DELAY_MS, whichever comes first: fdatasync is ~0.5 ms here, more than a whole read.
import { closeSync, constants, fdatasync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { canonicalJson, sha256Text } from "./canonical-json.js";

export const LOG_FORMAT_VERSION = 1;
export const GENESIS_SHA256 = "0".repeat(64);

export type LogRecord =
  | {
      /** A person approved an attached server's tool definitions (`latch servers approve`): the pins now in force. */
      type: "servers_approved";
      server: string;
      tools: { name: string; sha256: string }[];
      removed: string[];
      at: string;
    }
  | {
      type: "run_started";
      format_version: number;
      latch_version: string;
      config_sha256: string | null;
      programs: { path: string; sha256: string }[];
      posture: string | null;
      evidence: boolean;
      envelope: string;
      at: string;
    }
  | {
      type: "effect_decision";
      effect_id: number;
      /** When it was decided (logs before this field was written lack it). */
      at?: string;
      tool: string;
      session: string;
      request_sha256: string;
      gates: { gate: string; action: string; origin: string }[];
      final: string;
      reason: string;
      /** For a call that starts processes: contained or not, the sandbox mode, network or not. */
      sandbox?: SandboxEntry;
      /** A write call's id (`undo`, `latch history`). */
      call_id?: string;
      request?: unknown;
    }
  | {
      type: "effect_outcome";
      effect_id: number;
      status: string;
      result_sha256?: string;
      error_sha256?: string;
      /** What latch undid after the call: changes a contained process made to what git or an editor runs later. */
      undone?: readonly { path: string; what: string }[];
      /** A network grant through latch's proxy: the names granted, reached and refused. */
      network?: NetworkEntry;
      /** A write's pre-images: its call id and each file's sha256 before and after (src/host/undo-journal.ts). */
      preimages?: Record<string, unknown>;
      result?: unknown;
      /** With evidence: what people were shown beside the result (a write's diff). */
      display?: Record<string, unknown>;
    }
  | { type: "run_finished"; effects: number; at: string }
  /** The log's head could not be kept in the state database for a while (RunLog.anchor); now it is again. */
  | { type: "anchor_gap"; last_kept_line: number; failing_since: string; kept_again_at: string; reason: string }
  /** The config file changed on disk and was loaded again: later decisions follow this one. */
  | {
      type: "config_reloaded";
      config_sha256: string | null;
      programs: { path: string; sha256: string }[];
      envelope: string;
      at: string;
    };

/** For a call that starts processes: contained or not, the sandbox mode, network or not, and the names it asked for. */
export interface SandboxEntry {
  contained: boolean;
  mode?: string;
  network: boolean;
  /** The names the call's commands wanted through the proxy ("any": latch could not tell). */
  network_wanted?: string[] | "any";
  /** The `.git/config` changes a person approved, made with the file writable for their step (src/sandbox/call.ts). */
  git_config?: string[];
}

export interface NetworkEntry {
  granted: string[] | "any";
  reached: string[];
  refused: { host: string; why: string }[];
}

export interface LogLine {
  sequence: number;
  previous_sha256: string;
  record: LogRecord;
  record_sha256: string;
}

/** How long a record written without a sync may wait for one. */
export const SYNC_DELAY_MS = 100;

export type Durability = "sync" | "write";

export class LogWriteError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    /** The fault may pass (a full disk, a busy database): a later call tries again. */
    readonly passing = false,
  ) {
    super(message);
    this.name = "LogWriteError";
  }
}

/** The hash every line carries: of the canonical JSON of {sequence, previous_sha256, record}. */
export function lineHash(sequence: number, previous: string, record: unknown): string {
  return hashedLine(sequence, previous, canonicalJson(record)).hash;
}

/** The hash and the file line for a record already in canonical JSON: the record is serialised once. */
function hashedLine(sequence: number, previous: string, record: string): { hash: string; text: string } {
  // The canonical JSON of {sequence, previous_sha256, record}: its keys in sorted order.
  const hash = sha256Text(`{"previous_sha256":${JSON.stringify(previous)},"record":${record},"sequence":${sequence}}`);
  return {
    hash,
    text: `{"sequence":${sequence},"previous_sha256":${JSON.stringify(previous)},"record":${record},"record_sha256":"${hash}"}\n`,
  };
}

export class PolicyLog {
  private fd: number | undefined;
  private sequence = 0;
  private previous = GENESIS_SHA256;
  private failure: string | undefined;
  private failureCode: string | undefined;
  /** fdatasyncs of the file on the thread pool: how many started, all answered up to which, and the others answered. */
  private poolStarted = 0;
  private poolAnsweredUpTo = 0;
  private readonly poolAnswered = new Set<number>();
  /** What waits for every pool sync up to `upTo` to have answered (settled(), a pool sync's own answer). */
  private poolWaiters: { upTo: number; run: () => void }[] = [];
  private finished = false;
  private unsynced: NodeJS.Timeout | undefined;
  private synced = 0;
  /** Bytes of whole lines in the file: where a failed write is cut back to. */
  private size = 0;

  private constructor(
    readonly file: string,
    private readonly onSynced?: () => void,
    private readonly onLine?: (line: LogLine) => void,
  ) {}

  /**
   * Create the file (O_EXCL, 0600) and fsync its folder, so the file itself survives a crash.
   * `onSynced` runs after each sync (the log's head is then durable: RunLog keeps it elsewhere then);
   * `onLine` gets each line once it is in the file (RunLog copies it to a fleet's state store).
   */
  static create(file: string, onSynced?: () => void, onLine?: (line: LogLine) => void): PolicyLog {
    const log = new PolicyLog(path.resolve(file), onSynced, onLine);
    try {
      log.fd = openSync(
        log.file,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_NOFOLLOW,
        0o600,
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST")
        throw new LogWriteError(
          `The policy log \`${log.file}\` already exists; a log is never appended to. Pass a new path with --policy-log.`,
          code,
        );
      throw new LogWriteError(`The policy log \`${log.file}\` cannot be created (${(err as Error).message}).`, code);
    }
    syncFolder(path.dirname(log.file));
    return log;
  }

  /** Why the log cannot be written any more, if it cannot. */
  get broken(): string | undefined {
    return this.failure;
  }

  /**
   * Append one record: written now, and synced now or soon (see the top). Throws LogWriteError: a
   * passing one when the write failed and was cut back (nothing of the record is in the file); a
   * lasting one after a failed sync, and from then on.
   */
  append(record: LogRecord, durability: Durability = "sync"): LogLine {
    if (this.failure) throw new LogWriteError(this.failure);
    if (this.fd === undefined) throw new LogWriteError(`The policy log \`${this.file}\` is closed.`);
    const sequence = this.sequence + 1;
    const { hash, text } = hashedLine(sequence, this.previous, canonicalJson(record));
    const line: LogLine = { sequence, previous_sha256: this.previous, record, record_sha256: hash };
    const bytes = Buffer.from(text);
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off);
    } catch (err) {
      throw this.cutBack(err);
    }
    this.size += bytes.length;
    this.sequence = sequence;
    this.previous = line.record_sha256;
    this.onLine?.(line);
    if (durability === "sync") this.sync();
    else this.unsynced ??= setTimeout(() => this.syncQuietly(), SYNC_DELAY_MS).unref();
    return line;
  }

  /**
   * Resolves once every sync of the file on the thread pool has answered (at once when none runs);
   * rejects if the log is broken. The kernel tells a writeback error to one fdatasync of a file only:
   * a sync made while another runs (a read's lines, synced by the timer; another call's decision) can
   * report success for lines the other's failure lost. So an effect whose decision was synced here
   * runs only after this (pipeline.ts), and syncing() resolves only with every sync beside it.
   */
  settled(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.afterPoolSyncs(this.poolStarted, () => (this.failure ? reject(this.failed()) : resolve())),
    );
  }

  /**
   * `run` once every pool sync up to `upTo` has answered: those running beside a sync, which alone can
   * have taken its error. Later ones cannot, so a stream of them (reads while a write waits) holds no one.
   */
  private afterPoolSyncs(upTo: number, run: () => void): void {
    if (this.poolAnsweredUpTo >= upTo) run();
    else this.poolWaiters.push({ upTo, run });
  }

  private poolSyncAnswered(id: number): void {
    this.poolAnswered.add(id);
    while (this.poolAnswered.delete(this.poolAnsweredUpTo + 1)) this.poolAnsweredUpTo++;
    const ready = this.poolWaiters.filter((w) => w.upTo <= this.poolAnsweredUpTo);
    if (ready.length === 0) return;
    this.poolWaiters = this.poolWaiters.filter((w) => w.upTo > this.poolAnsweredUpTo);
    for (const w of ready) w.run();
  }

  /** fdatasync every record written so far (data and the new size; the rest of the inode can wait). */
  sync(): void {
    clearTimeout(this.unsynced);
    this.unsynced = undefined;
    if (this.failure || this.fd === undefined) return;
    try {
      fdatasyncSync(this.fd);
    } catch (err) {
      throw this.fail(err);
    }
    this.synced++;
    this.onSynced?.();
  }

  /**
   * fdatasync every record written so far on the thread pool, while this thread goes on: resolves once
   * they are durable (after `onSynced`), rejects with the LogWriteError that now blocks the log. A
   * write waits for it before its rename (MutationContext.decisionSynced), so the decision's sync
   * overlaps the write's own syncs instead of preceding them.
   */
  syncing(): Promise<void> {
    clearTimeout(this.unsynced);
    this.unsynced = undefined;
    if (this.failure) return Promise.reject(new LogWriteError(this.failure));
    if (this.fd === undefined) return Promise.reject(new LogWriteError(`The policy log \`${this.file}\` is closed.`));
    const fd = this.fd;
    const id = ++this.poolStarted;
    return new Promise<void>((resolve, reject) => {
      fdatasync(fd, (err) => {
        // Closed meanwhile (finish): the descriptor may be gone or reused by then, so this answer says
        // nothing of the file; run_finished's own sync answered for these lines.
        const closed = this.finished;
        if (err && !closed) this.fail(err);
        // Durable only if no sync that ran beside it failed: answered once those have.
        const upTo = this.poolStarted;
        this.poolSyncAnswered(id);
        this.afterPoolSyncs(upTo, () => {
          if (this.failure) return reject(this.failed());
          if (closed) return resolve();
          this.synced++;
          try {
            this.onSynced?.();
          } catch (e) {
            return reject(e instanceof Error ? e : new LogWriteError(String(e)));
          }
          resolve();
        });
      });
    });
  }

  /** How many times the file was fdatasynced (a record is durable once a sync follows it). */
  get syncs(): number {
    return this.synced;
  }

  /**
   * The timer's sync, on the thread pool: the fdatasync of a read's lines held this thread ~0.2–1.6 ms
   * every SYNC_DELAY_MS, in the middle of whatever call came next. A failure is kept in `failure`
   * and stops the next call.
   */
  private syncQuietly(): void {
    this.syncing().catch(() => undefined); // this.failure is set; the next append or sync throws it
  }

  /** A write failed, maybe halfway through its line: cut the file back to its last whole line. */
  private cutBack(err: unknown): LogWriteError {
    const code = (err as NodeJS.ErrnoException).code;
    try {
      ftruncateSync(this.fd!, this.size);
    } catch {
      return this.fail(err); // a partial line stays: the chain cannot be continued
    }
    return new LogWriteError(
      `The policy log \`${this.file}\` cannot be written now (${code ?? (err as Error).message}); nothing ran. Calls are refused while this lasts and served again once it can be written (free space, or lift the limit).`,
      code,
      true,
    );
  }

  // After a failed fdatasync the kernel may have dropped the dirty pages; a second sync can then
  // report success for lines that are lost. So a sync failure is never retried.
  private fail(err: unknown): LogWriteError {
    const code = (err as NodeJS.ErrnoException).code;
    this.failure = `The policy log \`${this.file}\` cannot be written (${code ?? (err as Error).message}); no effect runs until latch is restarted with a writable log.`;
    this.failureCode = code;
    return new LogWriteError(this.failure, code);
  }

  /** The error that blocks the log, for whoever asks after the sync that failed. */
  private failed(): LogWriteError {
    return new LogWriteError(this.failure ?? "The policy log is broken.", this.failureCode);
  }

  /** Write run_finished (when the log still works, and `end`: a log that never started gets none) and close the file. */
  finish(effects: number, end = true): void {
    if (this.finished) return;
    this.finished = true;
    try {
      if (!this.failure && end) this.append({ type: "run_finished", effects, at: new Date().toISOString() });
    } catch {
      // the failure is kept in `broken`; closing must still happen
    } finally {
      clearTimeout(this.unsynced);
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    }
  }

  /** The hash of the last line written: keep it elsewhere to anchor the chain. */
  get head(): string {
    return this.previous;
  }

  /** How many lines are written. */
  get lines(): number {
    return this.sequence;
  }
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
