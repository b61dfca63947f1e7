// Who holds a lock or writes a temp file. A pid means something only on the same machine, boot and pid
// namespace (a sandbox sharing the state dir has its own pids), so an owner names that place too; the
// process's start time tells a reused pid from its first owner.
import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { errnoCode } from "../errors.js";

/** This machine, boot and pid namespace, as 12 hex digits. */
export const PLACE: string = createHash("sha256")
  .update(
    [
      hostname(),
      orUnknown(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
      orUnknown(() => readlinkSync("/proc/self/ns/pid")),
    ].join("\n"),
  )
  .digest("hex")
  .slice(0, 12);

/** A process's start time in clock ticks since boot (/proc/PID/stat field 22), or undefined without /proc. */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined; // no /proc, or the process just went: kill(0) decides alone
  }
}

/** This process's start time, fixed for its life. */
export const STARTED: string = startTime(process.pid) ?? "?";

/**
 * Whether `pid` (a pid of this PLACE) still runs, and is the process that started at `started` when
 * that is given. False only when sure: EPERM means it runs as another user.
 */
export function pidAlive(pid: number, started?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (errnoCode(err) === "ESRCH") return false;
  }
  if (started === undefined || started === "?") return true;
  const now = startTime(pid);
  return now === undefined || now === started;
}

function orUnknown(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return "?"; // not Linux: no pid namespaces to tell apart
  }
}
