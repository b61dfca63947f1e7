// Whole-file replacement that a crash cannot tear: temp file in the same folder, fsync, rename over
// the target, fsync of the folder. The target keeps its mode (and owner, where we may set it).
// The two fsyncs run on the thread pool; the quick steps around them (open, write, chmod, close,
// rename) are synchronous, as in beneath.ts: a few µs each, where each trip through the pool cost
// an edit ~50 µs of this thread and as much wait. The folder's fsync overlaps what the caller does
// after the rename (`afterRename`: the ledger's marker), and is awaited before the write returns.
import {
  close as closeLater,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { open, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { Refusal, errnoCode } from "../errors.js";
import { pidAlive } from "./owner.js";
import { TAG, TEMP_RE, tempName, tempWatch } from "./temp-names.js";
import { bytesToInternal, showName } from "./names.js";
import { folderGone, openParent, type Folder } from "./beneath.js";
import type { ResolvedPath } from "./paths.js";
import { assertPinHolds, changedSinceRead, holds, type ReadPin } from "./same-file.js";

/** What happened after the rename: the file is changed; a warning says what could not be made sure of. */
export interface Written {
  warning?: string;
}

/** Where a write lands: a resolved path (its folder is walked from the root, beneath.ts). */
export type WriteTarget = Pick<ResolvedPath, "abs" | "rel">;

/** What a temp file is filled with: bytes in memory, or a function that writes them (a streamed edit). */
export type Fill = Uint8Array | string | ((fh: FileHandle) => Promise<void>);

/** Bytes up to this size are written to the temp file from this thread (a memory copy); larger ones on the thread pool. */
const WRITE_INLINE_MAX = 1 << 20;

/**
 * `beforeRename` runs after the temp file is synced and may throw to abandon the write: the temp file
 * is removed and the target is untouched. `afterRename` runs right after the rename, while the
 * folder's fsync runs on the thread pool, and must not throw. Throws only before the rename (nothing
 * changed); after it, nothing throws, and it returns once the folder is synced.
 */
export async function writeAtomic(
  target: WriteTarget,
  data: Uint8Array | string,
  beforeRename?: () => Promise<void> | void,
  afterRename?: () => void,
  pin?: ReadPin,
): Promise<Written> {
  return writeAtomicWith(target, data, beforeRename, afterRename, pin);
}

/** The same, with the content given as a Fill (a streamed edit writes chunk by chunk). */
export async function writeAtomicWith(
  target: WriteTarget,
  fill: Fill,
  beforeRename?: () => Promise<void> | void,
  afterRename?: () => void,
  pin?: ReadPin,
): Promise<Written> {
  const staged = await stageAtomic(target, fill, pin);
  try {
    await beforeRename?.();
  } catch (err) {
    await staged.discard();
    throw err;
  }
  return staged.commit(afterRename);
}

/** A synced temp file beside its target, not yet renamed over it: several can be staged, then committed in turn. */
export interface Staged {
  /** The target's folder, opened by the walk and held until commit() or discard() (or close()); a pin's stays the pin's. */
  readonly dir: Folder;
  /**
   * Rename over the target (throws only if that fails: nothing changed), then sync the folder on the
   * thread pool, running `afterRename` meanwhile; resolves once the folder is synced.
   */
  commit(afterRename?: () => void): Promise<Written>;
  /** Only the rename: a caller renaming several files into one folder syncs it once after (syncRenamed), then closes. */
  rename(): Promise<void>;
  /** Remove the temp file; the target is untouched. Closes the folder. */
  discard(): Promise<void>;
  /** Let go of the folder after rename() (idempotent). */
  close(): void;
  /** The temp file, by device and inode: what the rename puts at the target's name. */
  readonly made: { dev: number; ino: number };
}

/**
 * Write `fill`'s content to a temp file in the target's folder and sync it; nothing is renamed yet.
 * The folder is opened by the walk (no link followed) and every name in it is used through its
 * descriptor: the temp file, the rename and the folder's fsync all land in the folder that was
 * checked, even if it is swapped for a link meanwhile. Dead writers' temp files in the folder go
 * first, when the folder is due a sweep (sweepDue). With a pin, the read's folder is used (and left
 * open: the pin's owner closes it), and the rename checks the name still holds the file read.
 */
export async function stageAtomic(target: WriteTarget, fill: Fill, pin?: ReadPin): Promise<Staged> {
  const { dir, name: base } = pin?.dir
    ? { dir: pin.dir, name: path.posix.basename(target.rel) }
    : openParent(target, { doing: "writing" });
  let open_ = pin?.dir === undefined;
  /** Lets go of the temp file's descriptor, held from its creation (see `made`). */
  let release: (() => void) | undefined;
  const close = () => {
    if (open_) dir.close();
    open_ = false;
    release?.();
    release = undefined;
  };
  let tmp = "";
  let fh: FileHandle | number;
  let made: { dev: number; ino: number };
  let mode: number;
  let owner: { uid: number; gid: number } | undefined;
  /** The target is a file of one link: the rename frees its blocks (see renameOver). */
  let replacing = false;
  const bytes = typeof fill === "function" ? undefined : typeof fill === "string" ? Buffer.from(fill) : fill;
  const inline = bytes !== undefined && bytes.length <= WRITE_INLINE_MAX;
  try {
    if (pin?.dir) dir.check(); // without /proc, names go by path: the read's folder must still be there
    const st = lstatSync(dir.at(base), { throwIfNoEntry: false });
    if (st?.isFile()) {
      mode = st.mode & 0o7777;
      owner = { uid: st.uid, gid: st.gid };
      replacing = st.nlink === 1;
    } else mode = 0o666 & ~process.umask();
    if (sweepDue(dir.abs)) removeDeadTemps(dir);
    const tmpName = tempName(base);
    tmp = path.join(dir.abs, tmpName);
    // Live before it is named: the run record, compacted meanwhile to the live temp files (another
    // write, while this one's open is awaited), keeps it (src/host/recover.ts).
    tempWatch.live.add(tmp);
    tempWatch.created?.(tmp);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    try {
      fh = inline ? openSync(dir.at(tmpName), flags, mode) : await open(dir.at(tmpName), flags, mode);
    } catch (err) {
      // The folder held open was removed meanwhile: nothing can be created in it.
      if (errnoCode(err) === "ENOENT") throw folderGone(dir.rel, "writing");
      throw err;
    }
    try {
      dir.check();
      const { dev, ino } = fstatSync(typeof fh === "number" ? fh : fh.fd);
      made = { dev, ino };
    } catch (err) {
      // The folder moved meanwhile: the temp file stays (never removed by name), its descriptor goes.
      if (typeof fh === "number") closeSync(fh);
      else await fh.close().catch(() => undefined);
      throw err;
    }
  } catch (err) {
    // Nothing made, or made in the folder that moved meanwhile (dir.check): never removed by name.
    if (tmp) tempWatch.live.delete(tmp);
    close();
    throw err;
  }
  const tmpName = path.basename(tmp);
  const discard = () =>
    unlink(dir.at(tmpName))
      .catch(() => undefined)
      .finally(() => {
        tempWatch.live.delete(tmp);
        close();
      });
  // The temp file stays open until close(): while it is, no other file can be given its inode number,
  // so `made` names it alone (a file put at its name after it lost its last link could otherwise be
  // given the same number, and pass for it).
  try {
    if (typeof fh === "number") {
      const fd = fh;
      await fillInline(fd, bytes!, mode, owner);
      release = () => closeLater(fd, () => undefined);
    } else {
      const handle = fh;
      try {
        await (typeof fill === "function" ? fill(handle) : handle.writeFile(bytes!));
        await handle.chmod(mode);
        if (owner && process.getuid?.() === 0) await handle.chown(owner.uid, owner.gid);
        await handle.sync();
      } catch (err) {
        await handle.close();
        throw err;
      }
      release = () => void handle.close().catch(() => undefined);
    }
  } catch (err) {
    await discard();
    throw err;
  }
  // The file the rename replaces loses its last link, and the rename would free its blocks then:
  // ~0.1 ms of this thread on a disk mounted with `discard`. Held open across the rename, it is
  // freed at its last close instead, which goes to the thread pool. (A crash meanwhile leaves an
  // orphan inode, which the file system frees at its next mount; a kill closes it.)
  //
  // The rename goes by the temp file's name, which a process writing the folder can take over: the
  // name must still hold the file written, just before (else nothing is renamed, and the file put
  // there stays), and the target holds it just after (else the write is reported as not landed).
  const renameOver = async () => {
    // A pin holds the file read, which is the one replaced or nothing is (assertPinHolds): no second
    // hold, whose open would also tell a watching process (inotify) that the last check comes next.
    const held = replacing && !pin?.file ? openQuietly(dir.at(base)) : undefined;
    let renamed = false;
    try {
      dir.check();
      // Last, before the rename: only the file the write is based on is replaced (see ReadPin).
      if (pin) assertPinHolds(dir, base, pin, target);
      if (!holds(dir.at(tmpName), made)) throw tempTaken(target, "before");
      const linked = pin?.file === null && makeNew(dir, tmpName, base, target);
      if (!linked) renameSync(dir.at(tmpName), dir.at(base));
      renamed = true;
      if (linked) unlinkQuietly(dir, tmpName);
      tempWatch.live.delete(tmp);
      if (!holds(dir.at(base), made)) throw tempTaken(target, "after");
    } catch (err) {
      if (held !== undefined) closeSync(held);
      if (renamed || err instanceof TempTaken) {
        tempWatch.live.delete(tmp); // what is at the temp name (if anything) is another process's
        close();
      } else await discard();
      throw errnoCode(err) === "ENOENT" ? folderGone(dir.rel, "writing") : err;
    }
    if (held !== undefined) closeLater(held, () => undefined);
  };
  return {
    dir,
    made,
    discard,
    rename: renameOver,
    close,
    async commit(afterRename) {
      await renameOver();
      // The folder stays open until its fsync is done; whatever the caller does meanwhile, the write
      // returns only after it.
      const synced = syncRenamedLater(dir).finally(close);
      try {
        afterRename?.();
      } catch {
        // It must not throw (the caller settles after the write too): the file is renamed in, and stands.
      }
      return synced;
    },
  };
}

/**
 * A file where none was read: linked in, which fails on any file made at the name since (a rename
 * would replace it), instead of renamed. False where a file system has no hard links: the caller
 * renames (checked just before: assertStillRead).
 */
function makeNew(dir: Folder, tmpName: string, base: string, target: WriteTarget): boolean {
  try {
    linkSync(dir.at(tmpName), dir.at(base));
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") throw changedSinceRead(target, "a file was made there");
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") return false;
    throw err;
  }
}

/** The temp name, linked in, let go (latch's own name: a crash before this leaves it to the sweep). */
function unlinkQuietly(dir: Folder, tmpName: string): void {
  try {
    unlinkSync(dir.at(tmpName));
  } catch {
    // left for the sweep of dead writers' temp files; the new file is in place
  }
}

/** Another process renamed its own file onto the write's temp name, before or as it was renamed in. */
class TempTaken extends Refusal {}

function tempTaken(target: WriteTarget, when: "before" | "after"): TempTaken {
  const name = showName(target.rel);
  return new TempTaken(
    when === "before"
      ? `Another process replaced the temp file latch wrote \`${name}\` through before it was renamed in; nothing was written, and the file it put there was left alone.`
      : `Another process replaced the temp file latch wrote \`${name}\` through as it was renamed in: \`${name}\` now holds that process's file, not what latch wrote.`,
    "Read it again, then retry.",
  );
}

/** A descriptor of the file at `at` (never through a link, never waiting on a fifo), or undefined. */
function openQuietly(at: string | Buffer): number | undefined {
  try {
    return openSync(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // gone or changed meanwhile: the rename frees what it replaces itself
  }
}

/** Write, chmod (and chown) the temp file from this thread, then fsync it on the thread pool; on a failure the descriptor is closed. */
async function fillInline(
  fd: number,
  bytes: Uint8Array,
  mode: number,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  try {
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off);
    fchmodSync(fd, mode);
    if (owner && process.getuid?.() === 0) fchownSync(fd, owner.uid, owner.gid);
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * fsync a folder after renames into it (through the descriptor the walk opened). The files are
 * changed by then: a folder that refuses an fsync must not turn that into "nothing changed", so a
 * failure is a warning (none where fsync of a folder is not supported).
 */
export function syncRenamed(dir: Folder): Written {
  try {
    dir.sync();
  } catch (err) {
    return folderSyncFailed(err);
  }
  return {};
}

/** syncRenamed on the thread pool: resolves (never rejects) once the folder is synced, or with the warning. */
function syncRenamedLater(dir: Folder): Promise<Written> {
  return new Promise((resolve) => fsync(dir.fd, (err) => resolve(err ? folderSyncFailed(err) : {})));
}

function folderSyncFailed(err: unknown): Written {
  const code = errnoCode(err) ?? "";
  if (["EINVAL", "EACCES", "EPERM", "ENOTSUP", "EOPNOTSUPP", "EBADF"].includes(code)) return {};
  return {
    warning: `The file was written, but its folder could not be synced (${code || String(err)}): the change may not survive a crash of the machine.`,
  };
}

/** A folder is swept at this process's first write into it, then at most this often. */
const SWEEP_EVERY_MS = 5_000;
/** When this process last swept each folder (by path; a tidy-up, so a folder renamed meanwhile only waits longer). */
const swept = new Map<string, number>();

/**
 * Whether the folder is due a sweep for dead temp files (and it counts as swept from now): listing it
 * at every write cost an edit ~30 µs in a small folder and grows with the folder.
 */
function sweepDue(folder: string): boolean {
  const now = Date.now();
  const last = swept.get(folder);
  if (last !== undefined && now - last >= 0 && now - last < SWEEP_EVERY_MS) return false;
  if (swept.size >= 4096) swept.clear(); // many folders written: sweeping each once more is cheap
  swept.set(folder, now);
  return true;
}

/**
 * Temp files left in this folder by a killed writer (of any file in it): removed once their process is
 * gone, so a half-written temp file does not linger in list_dir and grep until its own file is written.
 */
export function removeDeadTemps(dir: Folder): void {
  let names: Buffer[];
  try {
    names = readdirSync(dir.self(), { encoding: "buffer" }); // bytes: a non-UTF-8 name's temp is swept too
  } catch {
    return; // the folder is about to be written into anyway; a listing failure only skips the tidy-up
  }
  for (const raw of names) {
    if (!raw.includes(".latch-")) continue; // nearly every entry: no need to decode it
    const name = bytesToInternal(raw);
    const m = TEMP_RE.exec(name);
    if (!m || m[3] !== TAG || pidAlive(Number(m[2]))) continue;
    try {
      unlinkSync(dir.at(name));
    } catch {
      // gone already, or not ours to remove
    }
  }
}
