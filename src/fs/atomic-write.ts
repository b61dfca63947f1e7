// Whole-file replacement that a crash cannot tear: temp file in the same folder, fsync, rename over
// the target, fsync of the folder. The target keeps its mode (and owner, where we may set it).
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readdir, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { PLACE, pidAlive } from "./owner.js";
import { bytesToInternal, osPath } from "./names.js";

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

export async function writeAtomic(
  abs: string,
  data: Uint8Array | string,
  beforeRename?: () => Promise<void> | void,
): Promise<Written> {
  return writeAtomicWith(abs, (fh) => fh.writeFile(data), beforeRename);
}

/**
 * The same, with the content written by `fill` (a streamed edit writes chunk by chunk). `beforeRename`
 * runs after the temp file is synced and may throw to abandon the write: the temp file is removed and
 * the target is untouched. Throws only before the rename (nothing changed); after it, nothing throws.
 */
export async function writeAtomicWith(
  abs: string,
  fill: (fh: FileHandle) => Promise<void>,
  beforeRename?: () => Promise<void> | void,
): Promise<Written> {
  const staged = await stageAtomic(abs, fill);
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
  /** Rename over the target (throws only if that fails: nothing changed), then sync the folder. */
  commit(): Promise<Written>;
  /** Only the rename: a caller renaming several files into one folder syncs it once after (syncRenamed). */
  rename(): Promise<void>;
  /** Remove the temp file; the target is untouched. */
  discard(): Promise<void>;
}

/**
 * Write `fill`'s content to a temp file in the target's folder and sync it; nothing is renamed yet.
 * `tidy: false` skips the sweep of dead temp files, for a folder already swept by this caller.
 */
export async function stageAtomic(
  abs: string,
  fill: (fh: FileHandle) => Promise<void>,
  { tidy = true } = {},
): Promise<Staged> {
  const dir = path.dirname(abs);
  const base = path.basename(abs);
  let mode = 0o666 & ~process.umask();
  let owner: { uid: number; gid: number } | undefined;
  try {
    const st = await stat(osPath(abs));
    mode = st.mode & 0o7777;
    owner = { uid: st.uid, gid: st.gid };
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  if (tidy) await removeDeadTemps(dir);
  const tmp = path.join(dir, `.${base}.latch-${process.pid}-${TAG}${randomBytes(4).toString("hex")}.tmp`);
  tempWatch.created?.(tmp);
  const fh = await open(
    osPath(tmp),
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  tempWatch.live.add(tmp);
  const discard = () =>
    unlink(osPath(tmp))
      .catch(() => undefined)
      .finally(() => tempWatch.live.delete(tmp));
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
      await rename(osPath(tmp), osPath(abs));
      tempWatch.live.delete(tmp);
    } catch (err) {
      await discard();
      throw err;
    }
  };
  return {
    discard,
    rename: renameOver,
    async commit() {
      await renameOver();
      return syncRenamed(dir);
    },
  };
}

/**
 * fsync a folder after renames into it. The files are changed by then: a folder that refuses an fsync
 * must not turn that into "nothing changed", so a failure is a warning (none where fsync of a folder is
 * not supported).
 */
export async function syncRenamed(dir: string): Promise<Written> {
  try {
    await syncDir(dir);
  } catch (err) {
    const code = errnoCode(err) ?? "";
    if (["EINVAL", "EACCES", "EPERM", "ENOTSUP", "EOPNOTSUPP"].includes(code)) return {};
    return {
      warning: `The file was written, but its folder could not be synced (${code || String(err)}): the change may not survive a crash of the machine.`,
    };
  }
  return {};
}

/** fsync a folder so that a rename or a new entry in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await open(osPath(dir), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/**
 * Temp files left in this folder by a killed writer (of any file in it): removed once their process is
 * gone, so a half-written temp file does not linger in list_dir and grep until its own file is written.
 */
async function removeDeadTemps(dir: string): Promise<void> {
  let names: Buffer[];
  try {
    names = await readdir(osPath(dir), { encoding: "buffer" }); // bytes: a non-UTF-8 name's temp is swept too
  } catch {
    return; // the folder is about to be written into anyway; a listing failure only skips the tidy-up
  }
  for (const raw of names) {
    if (!raw.includes(".latch-")) continue; // nearly every entry: no need to decode it
    const name = bytesToInternal(raw);
    const m = TEMP_RE.exec(name);
    if (!m || m[3] !== TAG || pidAlive(Number(m[2]))) continue;
    await unlink(osPath(path.join(dir, name))).catch(() => undefined);
  }
}
