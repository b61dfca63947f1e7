// The policy log: one JSON line per record, hash-chained, written and fsynced before the effect it
// decides runs. Created with O_EXCL and mode 0600 (an existing path is refused, never appended to).
// Once a write fails the log is broken for good, and every later effect is blocked.
import { closeSync, constants, fdatasyncSync, fsyncSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { sha256Json } from "./canonical-json.js";

export const LOG_FORMAT_VERSION = 1;
export const GENESIS_SHA256 = "0".repeat(64);

export type LogRecord =
  | { type: "run_started"; format_version: number; latch_version: string; config_sha256: string | null; programs: { path: string; sha256: string }[]; posture: string | null; evidence: boolean; envelope: string; at: string }
  | { type: "effect_decision"; effect_id: number; tool: string; session: string; request_sha256: string; gates: { gate: string; action: string; origin: string }[]; final: string; reason: string; request?: unknown }
  | { type: "effect_outcome"; effect_id: number; status: string; result_sha256?: string; error_sha256?: string; result?: unknown }
  | { type: "run_finished"; effects: number; at: string };

export interface LogLine {
  sequence: number;
  previous_sha256: string;
  record: LogRecord;
  record_sha256: string;
}

export class LogWriteError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = "LogWriteError";
  }
}

/** The hash every line carries: of the canonical JSON of {sequence, previous_sha256, record}. */
export function lineHash(sequence: number, previous: string, record: unknown): string {
  return sha256Json({ sequence, previous_sha256: previous, record });
}

export class PolicyLog {
  private fd: number | undefined;
  private sequence = 0;
  private previous = GENESIS_SHA256;
  private failure: string | undefined;
  private finished = false;

  private constructor(readonly file: string) {}

  /** Create the file (O_EXCL, 0600) and fsync its folder, so the file itself survives a crash. */
  static create(file: string): PolicyLog {
    const log = new PolicyLog(path.resolve(file));
    try {
      log.fd = openSync(log.file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw new LogWriteError(`The policy log \`${log.file}\` already exists; a log is never appended to. Pass a new path with --policy-log.`, code);
      throw new LogWriteError(`The policy log \`${log.file}\` cannot be created (${(err as Error).message}).`, code);
    }
    syncFolder(path.dirname(log.file));
    return log;
  }

  /** Why the log cannot be written any more, if it cannot. */
  get broken(): string | undefined {
    return this.failure;
  }

  /** Append one record and fsync it. Throws LogWriteError, and stays broken after the first failure. */
  append(record: LogRecord): LogLine {
    if (this.failure) throw new LogWriteError(this.failure);
    if (this.fd === undefined) throw new LogWriteError(`The policy log \`${this.file}\` is closed.`);
    const sequence = this.sequence + 1;
    const line: LogLine = { sequence, previous_sha256: this.previous, record, record_sha256: lineHash(sequence, this.previous, record) };
    const bytes = Buffer.from(JSON.stringify(line) + "\n");
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off);
      fdatasyncSync(this.fd); // data and the new size; the rest of the inode can wait
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.failure = `The policy log \`${this.file}\` cannot be written (${code ?? (err as Error).message}); no effect runs until latch is restarted with a writable log.`;
      throw new LogWriteError(this.failure, code);
    }
    this.sequence = sequence;
    this.previous = line.record_sha256;
    return line;
  }

  /** Write run_finished (when the log still works) and close the file. */
  finish(effects: number): void {
    if (this.finished) return;
    this.finished = true;
    try {
      if (!this.failure) this.append({ type: "run_finished", effects, at: new Date().toISOString() });
    } catch {
      // the failure is kept in `broken`; closing must still happen
    } finally {
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    }
  }

  /** The hash of the last line written: keep it elsewhere to anchor the chain. */
  get head(): string {
    return this.previous;
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
