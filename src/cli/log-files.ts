// Policy logs a client config can name: `--policy-log DIR` (an existing folder, or a path ending in
// "/") starts a new file there for every run, named by time and pid, so the same config can start
// latch again and again; `--log-retention` prunes that folder's older runs (src/audit/log-files.ts).
import { randomBytes } from "node:crypto";
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Retention } from "../audit/log-files.js";
import { UsageError } from "./options.js";

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

/** `30d` (days) or a size: `500000`, `200KB`, `50MB`, `1GB`. */
export function parseRetention(raw: string): Retention {
  const days = /^(\d+)\s*d$/i.exec(raw.trim());
  if (days && Number(days[1]) > 0) return { days: Number(days[1]) };
  const size = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  const unit = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 }[(size?.[2] ?? "b").toLowerCase() as "b"];
  if (size && Number(size[1]) > 0) return { bytes: Number(size[1]) * unit };
  throw new UsageError(`Expected \`--log-retention\` to be a number of days (30d) or a size (50MB), got \`${raw}\`.`);
}
