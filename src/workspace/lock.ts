// Cross-process mutation locks, keyed by the canonical path's hash and kept in the state dir, never
// beside the file (a lock file in the workspace would be a write nobody asked for).
// A lock is a folder made with mkdir (atomic) holding `owner`: the host, pid and start time of the
// process that holds it. A lock whose owner is dead is taken over at once, so a latch killed in the
// middle of a write holds nobody up (proper-lockfile, used before, waited 10 s for its mtime to go
// stale). The start time tells a reused pid from its first owner.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ToolError, errnoCode } from "../errors.js";
import { sha256 } from "./text.js";

/** A lock folder without an owner is a holder killed between mkdir and writing the owner: stale after this. */
const OWNERLESS_STALE_MS = 10_000;

export interface LockOptions {
  /** How long to wait for a live holder before giving up with ELOCKED. */
  waitMs?: number;
}

export async function withPathLock<T>(locksDir: string, canonical: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const lockPath = path.join(locksDir, sha256(canonical) + ".lock");
  await acquire(lockPath, canonical, opts.waitMs ?? 20_000);
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { recursive: true, force: true });
  }
}

async function acquire(lockPath: string, canonical: string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let pause = 2; ; pause = Math.min(50, pause * 1.5)) {
    if (tryLock(lockPath)) return;
    if (breakIfStale(lockPath)) continue;
    if (Date.now() >= deadline) throw new ToolError("ELOCKED", `Another writer holds \`${canonical}\` for too long. Retry in a moment.`);
    await sleep(pause);
  }
}

function tryLock(lockPath: string): boolean {
  try {
    mkdirSync(lockPath);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    throw err;
  }
  try {
    writeFileSync(path.join(lockPath, "owner"), SELF);
  } catch (err) {
    rmSync(lockPath, { recursive: true, force: true }); // an ownerless lock would hold others up for 10 s
    throw err;
  }
  return true;
}

/**
 * Remove the lock if its owner is dead. Breakers take a second lock first and look again under it,
 * so two of them cannot both judge one dead owner and the second remove the first's new lock.
 */
function breakIfStale(lockPath: string): boolean {
  if (!isStale(lockPath)) return false;
  const breaker = lockPath + ".break";
  try {
    mkdirSync(breaker);
  } catch (err) {
    if (errnoCode(err) !== "EEXIST") throw err;
    // A breaker killed mid-break leaves its folder; it has no owner to ask, so age decides.
    if ((ageMs(breaker) ?? 0) > OWNERLESS_STALE_MS) rmSync(breaker, { recursive: true, force: true });
    return false;
  }
  try {
    if (!isStale(lockPath)) return false;
    rmSync(lockPath, { recursive: true, force: true });
    return true;
  } finally {
    rmSync(breaker, { recursive: true, force: true });
  }
}

function isStale(lockPath: string): boolean {
  let owner: string;
  try {
    owner = readFileSync(path.join(lockPath, "owner"), "utf8");
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
    const age = ageMs(lockPath);
    return age === undefined ? false : age > OWNERLESS_STALE_MS; // gone already: mkdir will tell
  }
  return !ownerAlive(owner);
}

/** Whether the process an owner line names still runs (on another host: assumed so). */
export function ownerAlive(owner: string): boolean {
  const [host, pidText, started] = owner.trim().split(" ");
  if (host !== HOST) return true;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (errnoCode(err) === "ESRCH") return false;
    // EPERM: it runs, as another user
  }
  const now = startTime(pid);
  return now === undefined || now === started;
}

/** A process's start time in clock ticks since boot (/proc/PID/stat field 22), or undefined without /proc. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined; // no /proc (or the process just went): the kill(0) answer stands
  }
}

function ageMs(p: string): number | undefined {
  const st = statSync(p, { throwIfNoEntry: false });
  return st && Date.now() - st.mtimeMs;
}

const HOST = hostname();
/** This process as a lock owner: host, pid, start time. */
const SELF = `${HOST} ${process.pid} ${startTime(process.pid) ?? "?"}\n`;
