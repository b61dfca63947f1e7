// Whole-file replacement that a crash cannot tear: temp file in the same folder, fsync, rename over
// the target, fsync of the folder. The target keeps its mode (and owner, where we may set it).
import { randomBytes } from "node:crypto";
import { constants, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { PLACE, pidAlive } from "./owner.js";
import { bytesToInternal } from "./names.js";
import { folderGone, openParent, type Folder } from "./beneath.js";
import type { ResolvedPath } from "./paths.js";

// `.NAME.latch-PID-TAGRAND.tmp`: TAG (4 hex) is the writer's place (machine, boot, pid namespace), so
// only temp files whose pid can be checked from here are ever judged dead.
const TEMP_RE = /^\.(.+)\.latch-(\d+)-([0-9a-f]{4})[0-9a-f]{8}\.tmp$/s; // s: a name may hold a newline
const TAG = PLACE.slice(0, 4);

/**
 * The temp files this process is writing now, and who is told of each before it is created (the run
 * record, src/host/recover.ts), so a shutdown or the next start can remove what a killed write left.
 */
export const tempWatch: { live: Set<string>; created?: (tmp: string) => void } = { live: new Set() };

/** What happened after the rename: the file is changed; a warning says what could not be made sure of. */
export interface Written {
  warning?: string;
}

/** Where a write lands: a resolved path (its folder is walked from the root, beneath.ts). */
export type WriteTarget = Pick<ResolvedPath, "abs" | "rel">;

export async function writeAtomic(
  target: WriteTarget,
  data: Uint8Array | string,
  beforeRename?: () => Promise<void> | void,
): Promise<Written> {
  return writeAtomicWith(target, (fh) => fh.writeFile(data), beforeRename);
}

/**
 * The same, with the content written by `fill` (a streamed edit writes chunk by chunk). `beforeRename`
 * runs after the temp file is synced and may throw to abandon the write: the temp file is removed and
 * the target is untouched. Throws only before the rename (nothing changed); after it, nothing throws.
 */
export async function writeAtomicWith(
  target: WriteTarget,
  fill: (fh: FileHandle) => Promise<void>,
  beforeRename?: () => Promise<void> | void,
): Promise<Written> {
  const staged = await stageAtomic(target, fill);
  try {
    await beforeRename?.();
  } catch (err) {
    await staged.discard();
    throw err;
  }
  return staged.commit();
}

/** A synced temp file beside its target, not yet renamed over it: several can be staged, then committed in turn. */
export interface Staged {
  /** The target's folder, opened by the walk and held until commit() or discard() (or close()). */
  readonly dir: Folder;
  /** Rename over the target (throws only if that fails: nothing changed), then sync the folder. */
  commit(): Promise<Written>;
  /** Only the rename: a caller renaming several files into one folder syncs it once after (syncRenamed), then closes. */
  rename(): Promise<void>;
  /** Remove the temp file; the target is untouched. Closes the folder. */
  discard(): Promise<void>;
  /** Let go of the folder after rename() (idempotent). */
  close(): void;
}

/**
 * Write `fill`'s content to a temp file in the target's folder and sync it; nothing is renamed yet.
 * The folder is opened by the walk (no link followed) and every name in it is used through its
 * descriptor: the temp file, the rename and the folder's fsync all land in the folder that was
 * checked, even if it is swapped for a link meanwhile. `tidy: false` skips the sweep of dead temp
 * files, for a folder already swept by this caller.
 */
export async function stageAtomic(
  target: WriteTarget,
  fill: (fh: FileHandle) => Promise<void>,
  { tidy = true } = {},
): Promise<Staged> {
  const { dir, name: base } = openParent(target, { doing: "writing" });
  let open_ = true;
  const close = () => {
    if (open_) dir.close();
    open_ = false;
  };
  let tmp: string;
  let fh: FileHandle;
  let mode = 0o666 & ~process.umask();
  let owner: { uid: number; gid: number } | undefined;
  try {
    const st = lstatSync(dir.at(base), { throwIfNoEntry: false });
    if (st?.isFile()) {
      mode = st.mode & 0o7777;
      owner = { uid: st.uid, gid: st.gid };
    }
    if (tidy) removeDeadTemps(dir);
    const tmpName = `.${base}.latch-${process.pid}-${TAG}${randomBytes(4).toString("hex")}.tmp`;
    tmp = path.join(dir.abs, tmpName);
    tempWatch.created?.(tmp);
    try {
      fh = await open(
        dir.at(tmpName),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        mode,
      );
    } catch (err) {
      // The folder held open was removed meanwhile: nothing can be created in it.
      if (errnoCode(err) === "ENOENT") throw folderGone(dir.rel, "writing");
      throw err;
    }
    dir.check();
  } catch (err) {
    close();
    throw err;
  }
  const tmpName = path.basename(tmp);
  tempWatch.live.add(tmp);
  const discard = () =>
    unlink(dir.at(tmpName))
      .catch(() => undefined)
      .finally(() => {
        tempWatch.live.delete(tmp);
        close();
      });
  try {
    try {
      await fill(fh);
      await fh.chmod(mode);
      if (owner && process.getuid?.() === 0) await fh.chown(owner.uid, owner.gid);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    await discard();
    throw err;
  }
  const renameOver = async () => {
    try {
      dir.check();
      await rename(dir.at(tmpName), dir.at(base));
      tempWatch.live.delete(tmp);
    } catch (err) {
      await discard();
      throw errnoCode(err) === "ENOENT" ? folderGone(dir.rel, "writing") : err;
    }
  };
  return {
    dir,
    discard,
    rename: renameOver,
    close,
    async commit() {
      await renameOver();
      try {
        return syncRenamed(dir);
      } finally {
        close();
      }
    },
  };
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
    const code = errnoCode(err) ?? "";
    if (["EINVAL", "EACCES", "EPERM", "ENOTSUP", "EOPNOTSUPP", "EBADF"].includes(code)) return {};
    return {
      warning: `The file was written, but its folder could not be synced (${code || String(err)}): the change may not survive a crash of the machine.`,
    };
  }
  return {};
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
