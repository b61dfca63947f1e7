// Policy logs a client config can name: `--policy-log DIR` (an existing folder, or a path ending in
// "/") starts a new file there for every run, named by time and pid, so the same config can start
// latch again and again; `--log-retention` prunes that folder's older runs; `latch log list` shows them.
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { UsageError } from "./options.js";

/** The names latch gives its run logs; retention touches nothing else in the folder. */
const RUN_LOG = /^policy-\d{4}-\d\d-\d\dT[\d-]+Z-\d+-[0-9a-f]+\.jsonl$/;

export function isLogFolder(target: string): boolean {
  if (target.endsWith("/") || target.endsWith(path.sep)) return true;
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/** A new file in `dir` for this run: `policy-<UTC time>-<pid>-<random>.jsonl`. */
export function newRunLog(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return path.join(path.resolve(dir), `policy-${stamp}-${process.pid}-${randomBytes(3).toString("hex")}.jsonl`);
}

export type Retention = { days: number } | { bytes: number };

/** `30d` (days) or a size: `500000`, `200KB`, `50MB`, `1GB`. */
export function parseRetention(raw: string): Retention {
  const days = /^(\d+)\s*d$/i.exec(raw.trim());
  if (days && Number(days[1]) > 0) return { days: Number(days[1]) };
  const size = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  const unit = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 }[(size?.[2] ?? "b").toLowerCase() as "b"];
  if (size && Number(size[1]) > 0) return { bytes: Number(size[1]) * unit };
  throw new UsageError(`Expected \`--log-retention\` to be a number of days (30d) or a size (50MB), got \`${raw}\`.`);
}

export interface RunLogFile {
  file: string;
  bytes: number;
  modified: string;
  started_at: string | null;
  finished: boolean;
  effects: number;
}

/** The folder's run logs, oldest first. */
export function listRunLogs(dir: string): RunLogFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => RUN_LOG.test(n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return names
    .map((n) => {
      const file = path.join(dir, n);
      const st = statSync(file);
      const text = readFileSync(file, "utf8");
      const first = text.slice(0, text.indexOf("\n") + 1 || undefined);
      const started = /"at":"([^"]+)"/.exec(first)?.[1] ?? null;
      return {
        file,
        bytes: st.size,
        modified: st.mtime.toISOString(),
        started_at: started,
        finished: text.includes('"type":"run_finished"'),
        effects: (text.match(/"type":"effect_decision"/g) ?? []).length,
        mtimeMs: st.mtimeMs,
      };
    })
    .sort((a, b) => a.mtimeMs - b.mtimeMs || a.file.localeCompare(b.file))
    .map(({ mtimeMs: _, ...rest }) => rest);
}

/** Remove the folder's older run logs past the retention; never `keep` (this run's file). Returns what went. */
export function pruneRunLogs(dir: string, retention: Retention, keep: string): string[] {
  const logs = listRunLogs(dir).filter((l) => l.file !== keep);
  const gone: string[] = [];
  if ("days" in retention) {
    const cutoff = Date.now() - retention.days * 86_400_000;
    for (const l of logs) if (Date.parse(l.modified) < cutoff) gone.push(l.file);
  } else {
    let total = logs.reduce((s, l) => s + l.bytes, 0);
    for (const l of logs) {
      if (total <= retention.bytes) break;
      gone.push(l.file);
      total -= l.bytes;
    }
  }
  for (const f of gone) unlinkSync(f);
  return gone;
}
