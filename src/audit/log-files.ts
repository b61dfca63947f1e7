// The run logs latch names itself (`policy-<UTC time>-<pid>-<random>.jsonl`, one per run, in the state
// dir's logs/ or a --policy-log folder): listing them, and retention. Retention ([log] in agents.toml,
// or --log-retention) removes the oldest finished runs at a host's start and close; each removed log's
// head stays in the state database, marked pruned, so `latch log verify` still says what went.
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import type { LogHeads } from "./log-heads.js";

/** The names latch gives its run logs; retention touches nothing else in the folder. */
export const RUN_LOG = /^policy-\d{4}-\d\d-\d\dT[\d-]+Z-(\d+)-[0-9a-f]+\.jsonl$/;

/** What to keep: runs modified in the last `days`, the newest `maxFiles`, the newest up to `bytes`. Unset: no limit. */
export interface Retention {
  days?: number;
  maxFiles?: number;
  bytes?: number;
}

export interface RunFile {
  file: string;
  bytes: number;
  mtimeMs: number;
}

/** The folder's run logs, oldest first (by modification, then name). */
export function runLogFiles(dir: string): RunFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => RUN_LOG.test(n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const files: RunFile[] = [];
  for (const n of names) {
    const file = path.join(dir, n);
    try {
      const st = statSync(file);
      files.push({ file, bytes: st.size, mtimeMs: st.mtimeMs });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // ENOENT: another run's retention took it
    }
  }
  return files.sort((a, b) => a.mtimeMs - b.mtimeMs || a.file.localeCompare(b.file));
}

/**
 * Remove the folder's oldest run logs past the retention, never `keep` (this run's file) and never a
 * run still being written (no run_finished yet, and its pid alive). `maxFiles` counts a place for
 * this run's own log, which may not exist yet (the default log is made at the first call). Each
 * removed log's head is marked pruned first. Returns what went.
 */
export function pruneRunLogs(dir: string, retention: Retention, keep: string, heads?: LogHeads): string[] {
  const all = runLogFiles(dir).filter((f) => f.file !== keep);
  const removable = all.filter((f) => !stillWritten(f.file));
  const gone = new Set<string>();
  if (retention.days !== undefined) {
    const cutoff = Date.now() - retention.days * 86_400_000;
    for (const f of removable) if (f.mtimeMs < cutoff) gone.add(f.file);
  }
  if (retention.maxFiles !== undefined) {
    let count = all.length + 1 - gone.size;
    for (const f of removable) {
      if (count <= retention.maxFiles) break;
      if (gone.has(f.file)) continue;
      gone.add(f.file);
      count--;
    }
  }
  if (retention.bytes !== undefined) {
    let total = all.reduce((s, f) => s + (gone.has(f.file) ? 0 : f.bytes), 0);
    for (const f of removable) {
      if (total <= retention.bytes) break;
      if (gone.has(f.file)) continue;
      gone.add(f.file);
      total -= f.bytes;
    }
  }
  const removed: string[] = [];
  for (const file of gone) {
    heads?.markPruned(file);
    try {
      unlinkSync(file);
      removed.push(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // ENOENT: another run's retention took it
    }
  }
  return removed;
}

/** A run log without run_finished whose process (the pid in its name) is alive: another latch still writes it. */
function stillWritten(file: string): boolean {
  if (endsFinished(file)) return false;
  const pid = Number(RUN_LOG.exec(path.basename(file))?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

/** Whether the log's last line is run_finished (read from its tail only: a log can be large). */
function endsFinished(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return true; // gone: nothing is writing it
    throw err;
  }
  try {
    // By the descriptor: another run's retention may unlink the name once it is open.
    const size = fstatSync(fd).size;
    const len = Math.min(size, 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    const text = buf.toString("utf8").trimEnd();
    const last = text.slice(text.lastIndexOf("\n") + 1);
    return last.includes('"type":"run_finished"');
  } finally {
    closeSync(fd);
  }
}
