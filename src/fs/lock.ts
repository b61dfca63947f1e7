// Cross-process mutation locks, keyed by the canonical path's hash and kept in the state dir, never
// beside the file (a lock file in the workspace would be a write nobody asked for).
// A lock is a file made with O_CREAT|O_EXCL (atomic) holding the owner line: the holder's place
// (machine, boot, pid namespace: src/fs/owner.ts), pid, start time and a token for this hold. A lock
// whose owner is dead is taken over at once, so a latch killed in the middle of a write holds nobody
// up. An owner whose pid cannot be checked from here (another place) counts as alive while it keeps
// touching the lock (every REFRESH_MS), and as gone once it has not for UNCHECKABLE_STALE_MS.
// Earlier latches made the lock a folder (mkdir) holding the line in a file `owner`: a lock of one of
// them, running beside this one or killed holding it, has the same name, is held as long, and is
// judged and removed the same way. A file is made and removed in a few µs; a folder's block is
// allocated by mkdir and freed by rmdir, which took ~0.15-0.6 ms on a disk mounted with `discard`,
// and meanwhile held the locks folder, so the next write's mkdir there waited for it.
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { rm, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ToolError, errnoCode } from "../errors.js";
import { PLACE, STARTED, pidAlive } from "./owner.js";
import { sha256 } from "./text.js";
import { osPath } from "./names.js";
import { uniqueHex12 } from "./unique.js";

/**
 * A lock without a whole owner line is a holder killed between creating it and writing the line (an
 * earlier latch's folder: between mkdir and writing its `owner` file, or that file's line): stale after this.
 */
const OWNERLESS_STALE_MS = 10_000;
const REFRESH_MS = 5_000;
const UNCHECKABLE_STALE_MS = 30_000;

export interface LockOptions {
  /** How long to wait for a live holder before giving up with ELOCKED. */
  waitMs?: number;
}

/**
 * This process's waiters for each lock, first come first served: only the head of a queue polls the
 * lock. Polling alone is not fair (a waiter can lose every race to newer ones and time out
 * under load, with 50 HTTP sessions on one file); between processes it remains the rule. Process-wide
 * by nature, like the locks themselves.
 */
const waiting = new Map<string, Promise<void>>();

/**
 * Run `fn` holding the lock of `canonical`, released when it ends, or earlier if `fn` calls the
 * `unlock` it is given (a write whose file is renamed in and settled, while its folder's fsync, which
 * needs no lock, runs on).
 */
export async function withPathLock<T>(
  locksDir: string,
  canonical: string,
  fn: (unlock: () => void) => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const lockPath = path.join(locksDir, sha256(osPath(canonical)) + ".lock");
  const deadline = Date.now() + (opts.waitMs ?? 20_000);
  const ahead = waiting.get(lockPath);
  let leave!: () => void;
  const turn = new Promise<void>((resolve) => (leave = resolve));
  // The next waiter waits for this one and for everyone ahead of it, even if this one gives up early.
  const queue = ahead ? ahead.then(() => turn) : turn;
  waiting.set(lockPath, queue);
  // Forgotten once everyone in it has left, this waiter last: not when this one leaves, since one that
  // gives up early may still have waiters ahead of it, whom a newcomer must queue behind.
  void queue.then(() => {
    if (waiting.get(lockPath) === queue) waiting.delete(lockPath);
  });
  try {
    if (ahead) await untilOrElse(ahead, deadline, canonical);
    const owner = await acquire(lockPath, canonical, deadline);
    const touch = setInterval(() => touchQuietly(lockPath), REFRESH_MS).unref();
    let held = true;
    const unlock = () => {
      if (!held) return;
      held = false;
      clearInterval(touch);
      try {
        release(lockPath, owner);
      } finally {
        leave();
      }
    };
    try {
      return await fn(unlock);
    } finally {
      unlock();
    }
  } finally {
    leave();
  }
}

function locked(canonical: string): ToolError {
  return new ToolError("ELOCKED", `Another writer holds \`${canonical}\` for too long. Retry in a moment.`);
}

/** Wait for the waiters ahead, or throw ELOCKED at the deadline. */
async function untilOrElse(ahead: Promise<void>, deadline: number, canonical: string): Promise<void> {
  const ac = new AbortController();
  const ms = Math.min(Math.max(0, deadline - Date.now()), 2 ** 31 - 1); // a longer timer fires at once
  const late = sleep(ms, "late", { signal: ac.signal }).catch(() => "gone");
  try {
    if ((await Promise.race([ahead.then(() => "turn"), late])) === "late") throw locked(canonical);
  } finally {
    ac.abort();
  }
}

async function acquire(lockPath: string, canonical: string, deadline: number): Promise<string> {
  for (let pause = 2; ; pause = Math.min(50, pause * 1.5)) {
    const owner = tryLock(lockPath);
    if (owner) return owner;
    if (breakIfStale(lockPath)) continue;
    if (Date.now() >= deadline) throw locked(canonical);
    await sleep(pause);
  }
}

/** The owner line written, or undefined when the lock is held. */
function tryLock(lockPath: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return undefined;
    throw err;
  }
  const owner = `${PLACE} ${process.pid} ${STARTED} ${uniqueHex12()}\n`;
  try {
    const line = Buffer.from(owner);
    for (let off = 0; off < line.length;) off += writeSync(fd, line, off);
  } catch (err) {
    closeSync(fd);
    rmSync(lockPath, { force: true }); // an ownerless lock would hold others up for 10 s
    throw err;
  }
  closeSync(fd);
  return owner;
}

/** Remove the lock only if it is still this hold's. */
function release(lockPath: string, owner: string): void {
  if (readOwner(lockPath) !== owner) return; // taken over meanwhile: the lock is someone else's now
  removeLock(lockPath);
}

/**
 * A lock file goes in one step. An earlier latch's folder is renamed first, then removed: a kill
 * mid-removal leaves a `.gone-` folder nobody waits on (swept by sweepGone), never an ownerless lock
 * that holds the next writer up for OWNERLESS_STALE_MS.
 */
export function removeLock(lockPath: string): void {
  try {
    unlinkSync(lockPath);
    return;
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") return; // removed meanwhile
    if (code !== "EISDIR" && code !== "EPERM") throw err; // EPERM: what macOS says of a folder
  }
  const gone = `${lockPath}.gone-${uniqueHex12()}`;
  try {
    renameSync(lockPath, gone);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return; // removed meanwhile
    throw err;
  }
  // The lock is free once renamed. Its folder goes on the thread pool: rmdir waits on the file
  // system's journal. One a process ends before removing (or fails to) is swept at a later start
  // (sweepGone). It holds its owner file alone: that and the folder go in two steps; a folder holding
  // anything else is removed whole.
  const done: Promise<void> = unlink(path.join(gone, "owner"))
    .catch(() => undefined)
    .then(() => rmdir(gone))
    .catch(() => rm(gone, { recursive: true, force: true }))
    .catch(() => undefined)
    .finally(() => removing.delete(done));
  removing.add(done);
}

/** Renamed lock folders still being removed (removeLock); process-wide, as the locks are. */
const removing = new Set<Promise<void>>();

/** Resolves once every lock released so far is removed from disk (a host's shutdown waits for it). */
export async function locksRemoved(): Promise<void> {
  await Promise.all([...removing]);
}

/** Remove what removals cut short left in `locksDir`; only old ones, so a removal in progress is not raced. */
export function sweepGone(locksDir: string, names: readonly string[]): void {
  for (const name of names) {
    if (!/\.lock\.gone-[0-9a-f]+$/.test(name)) continue;
    const p = path.join(locksDir, name);
    if ((ageMs(p) ?? 0) > OWNERLESS_STALE_MS) rmSync(p, { recursive: true, force: true });
  }
}

/**
 * Remove the lock if its owner is gone. Breakers take a second lock first and look again under it,
 * so two of them cannot both judge one dead owner and the second remove the first's new lock.
 */
export function breakIfStale(lockPath: string): boolean {
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
    removeLock(lockPath);
    return true;
  } finally {
    rmSync(breaker, { recursive: true, force: true });
  }
}

function isStale(lockPath: string): boolean {
  const owner = readOwner(lockPath);
  const age = ageMs(lockPath);
  if (age === undefined) return false; // gone already: the next try takes it
  // The line is written in one write and ends with a newline; anything less names nobody to ask.
  if (owner === undefined || !owner.endsWith("\n")) return age > OWNERLESS_STALE_MS;
  const alive = ownerAlive(owner);
  return alive === undefined ? age > UNCHECKABLE_STALE_MS : !alive;
}

/** Whether the process an owner line names still runs; undefined when it is of another place and cannot be checked. */
export function ownerAlive(owner: string): boolean | undefined {
  const [place, pid, started] = owner.trim().split(" ");
  if (place !== PLACE) return undefined;
  return pidAlive(Number(pid), started);
}

/** The lock's owner line, as much of it as there is; undefined when there is no lock, or no line in it yet. */
export function readOwner(lockPath: string): string | undefined {
  try {
    return readFileSync(lockPath, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return undefined;
    if (errnoCode(err) !== "EISDIR") throw err;
  }
  try {
    return readFileSync(path.join(lockPath, "owner"), "utf8"); // an earlier latch's lock folder
  } catch (err) {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return undefined;
    throw err;
  }
}

/** The holder's sign of life for owners that cannot be checked by pid. */
function touchQuietly(lockPath: string): void {
  try {
    const now = new Date();
    utimesSync(lockPath, now, now);
  } catch {
    // the lock is being released, or the state dir went away: the next write will say so
  }
}

function ageMs(p: string): number | undefined {
  const st = statSync(p, { throwIfNoEntry: false });
  return st && Date.now() - st.mtimeMs;
}
