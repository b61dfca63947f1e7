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
  return statFields(pid)?.[19];
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
  // A zombie runs nothing and holds nothing: a writer killed while its parent's event loop is busy
  // stays one until it is reaped, and its locks must not wait for that.
  const fields = statFields(pid);
  if (fields !== undefined && (fields[0] === "Z" || fields[0] === "X")) return false;
  if (started === undefined || started === "?") return true;
  return fields === undefined || fields[19] === started;
}

/** /proc/PID/stat's fields after the command name (state first), or undefined without it. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // no /proc, or the process just went: kill(0) decided
  }
}

function orUnknown(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return "?"; // not Linux: no pid namespaces to tell apart
  }
}
