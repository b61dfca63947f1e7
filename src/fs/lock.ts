// Cross-process mutation locks, keyed by the canonical path's hash and kept in the state dir, never
// beside the file (a lock file in the workspace would be a write nobody asked for).
// A lock is a file holding the owner line: the holder's place (machine, boot, pid namespace:
// src/fs/owner.ts), pid, start time and a token of the process. It is taken with link(2), atomic
// like mkdir: each process writes its line once into its owner file (`owner-PLACE-PID-START`, in the
// locks folder) and links that file at the lock's name; releasing is one unlink. No inode is made or
// freed per hold: on this machine's ext4 (mounted with `discard`) creating one took 10-200 µs, and a
// folder's rmdir 0.15-0.6 ms, holding the locks folder meanwhile. Where hard links are refused, a
// lock is a file of its own, created with O_EXCL (lockMode). A lock whose owner is dead is taken
// over at once, so a latch killed in the middle of a write holds nobody up, and its owner file goes
// with it. An owner whose pid cannot be checked from here (another place) counts as alive while it
// keeps touching the lock (at each hold and every REFRESH_MS), and as gone once it has not for
// UNCHECKABLE_STALE_MS. Earlier latches made the lock a folder (mkdir) holding the line in a file
// `owner`: a lock of one of them, running beside this one or killed holding it, has the same name,
// is held as long, and is judged and removed the same way.
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
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

/** Whether locks are taken with link(2); a test turns it off to run the fallback, a lock file of its own per hold. */
export const lockMode = { links: true };

/** This process's owner line, the same in every lock it takes by link. */
const OWNER_LINE = `${PLACE} ${process.pid} ${STARTED} ${uniqueHex12()}\n`;
/** The name of a process's owner file, from its owner line's place, pid and start time. */
const ownerFileName = (place: string, pid: string, started: string) => `owner-${place}-${pid}-${started}`;
const OWNER_FILE = ownerFileName(PLACE, String(process.pid), STARTED);
const OWNER_FILE_RE = /^owner-([0-9a-f]{12})-(\d+)-(\d+|\?)$/;
/** The locks folders whose owner file this process has written (it is written again if it went). */
const ownerWritten = new Set<string>();

/** The owner line written, or undefined when the lock is held. */
function tryLock(lockPath: string): string | undefined {
  if (!lockMode.links) return tryLockFile(lockPath);
  const dir = path.dirname(lockPath);
  const own = path.join(dir, OWNER_FILE);
  for (let again = false; ; again = true) {
    if (!ownerWritten.has(dir)) writeOwnerFile(own);
    ownerWritten.add(dir);
    try {
      linkSync(own, lockPath);
      break;
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EEXIST") return undefined;
      if (code === "ENOENT" && !again) {
        ownerWritten.delete(dir); // removed meanwhile (another host of this process ended): written again
        continue;
      }
      // A file system without hard links (or out of them for this file): a lock file of its own.
      if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK")
        return tryLockFile(lockPath);
      throw err;
    }
  }
  // Its age is the owner file's: made young for those that judge a lock by age (another place, an
  // earlier latch, which reads no owner line in a file).
  touchQuietly(lockPath);
  return OWNER_LINE;
}

/**
 * This process's owner file, before its first link: one that exists is this process's, written whole
 * (a write that fails removes it, and no other process has this name), so a lock never links a partial line.
 */
function writeOwnerFile(own: string): void {
  let fd: number;
  try {
    fd = openSync(own, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return;
    throw err;
  }
  try {
    const line = Buffer.from(OWNER_LINE);
    for (let off = 0; off < line.length;) off += writeSync(fd, line, off);
  } catch (err) {
    closeSync(fd);
    rmSync(own, { force: true });
    throw err;
  }
  closeSync(fd);
}

/** The fallback: a lock file of its own made with O_EXCL, holding an owner line with this hold's token. */
function tryLockFile(lockPath: string): string | undefined {
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
  if (owner === OWNER_LINE && linkedToOwnerFile(lockPath)) return removeLock(lockPath);
  if (readOwner(lockPath) !== owner) return; // taken over meanwhile: the lock is someone else's now
  removeLock(lockPath);
}

/**
 * Whether the lock is a link to this process's owner file, which is there now: then it is this
 * process's, held by the hold that releases it (a process's holds of one path take turns), and its
 * inode cannot have been freed and reused meanwhile. Two lstats where reading the line took an
 * open, a read and a close (~40 µs of an edit); false sends the caller to the line.
 */
function linkedToOwnerFile(lockPath: string): boolean {
  const lock = lstatSync(lockPath, { throwIfNoEntry: false });
  if (!lock?.isFile() || lock.nlink < 2) return false;
  const own = lstatSync(path.join(path.dirname(lockPath), OWNER_FILE), { throwIfNoEntry: false });
  return own !== undefined && own.ino === lock.ino && own.dev === lock.dev;
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

/**
 * Remove what removals cut short left in `locksDir` (only old ones, so a removal in progress is not
 * raced), and the owner files of dead processes of this place.
 */
export function sweepGone(locksDir: string, names: readonly string[]): void {
  for (const name of names) {
    const owner = OWNER_FILE_RE.exec(name);
    if (owner) {
      if (owner[1] === PLACE && !pidAlive(Number(owner[2]), owner[3]))
        rmSync(path.join(locksDir, name), { force: true });
      continue;
    }
    if (!/\.lock\.gone-[0-9a-f]+$/.test(name)) continue;
    const p = path.join(locksDir, name);
    if ((ageMs(p) ?? 0) > OWNERLESS_STALE_MS) rmSync(p, { recursive: true, force: true });
  }
}

/** This process is done with `locksDir` (its host ends): its owner file goes; a later lock writes it again. */
export function dropOwnerFile(locksDir: string): void {
  ownerWritten.delete(locksDir);
  rmSync(path.join(locksDir, OWNER_FILE), { force: true });
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
  if (alive === false) removeOwnerFile(path.dirname(lockPath), owner);
  return alive === undefined ? age > UNCHECKABLE_STALE_MS : !alive;
}

/** A dead owner's owner file (a lock may still link it: that lock keeps its line). */
function removeOwnerFile(locksDir: string, owner: string): void {
  const [place, pid, started] = owner.trim().split(" ");
  if (!place || !pid || !started) return;
  const name = ownerFileName(place, pid, started);
  if (!OWNER_FILE_RE.test(name)) return;
  rmSync(path.join(locksDir, name), { force: true });
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
