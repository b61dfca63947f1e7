// Whether a name still holds the file latch means, checked just before the name is used again: a
// process writing the workspace can put another file there at any moment, so a name is never used by
// itself twice. The files are named by device and inode, and held open meanwhile (a file whose last
// link went and that nothing holds frees its inode number, which the next file made may be given).
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, renameSync, unlinkSync } from "node:fs";
import path from "node:path";
import { Refusal, errnoCode } from "../errors.js";
import type { Folder } from "./beneath.js";
import { showName } from "./names.js";
import { pidAlive } from "./owner.js";
import { TAG, TEMP_RE, tempName, tempWatch } from "./temp-names.js";

type Named = { rel: string };

/**
 * What a write is based on, on this disk (readCurrentPinned, src/fs/current.ts): the folder the read
 * walked to, held open, and the file it read there. A write given one stages in that folder, not
 * one a fresh walk finds (a folder exchanged for another meanwhile would take the write to a file
 * nobody read), and renames only while the name there is still that file, or still missing.
 */
export interface ReadPin {
  /** The folder, opened by the read's walk; none when it was missing (the write walks, as without a pin). */
  readonly dir?: Folder;
  /**
   * The file read, by device and inode (and its ctime, which any write to it or chmod moves on, and
   * nothing can set back); null: there was none.
   */
  readonly file: { dev: number; ino: number; ctimeMs?: number } | null;
  /**
   * Whether the file still holds the bytes read, read again through its held descriptor: a write
   * through a shared mapping moves neither its ctime nor its mtime. None for a file too large to hold.
   */
  readonly unchanged?: () => boolean;
  /** Let go of the folder, once the write is done or abandoned (idempotent). */
  close(): void;
}

/** Whether `at` names the file `node` (by device and inode), not through a link. */
export function holds(at: string | Buffer, node: { dev: number; ino: number }): boolean {
  const now = lstatSync(at, { throwIfNoEntry: false });
  return now !== undefined && now.dev === node.dev && now.ino === node.ino;
}

/**
 * Remove `name` in `dir` only if it holds `file` (by device and inode, a file the caller holds open or
 * that has another link, so its number cannot pass to another file). A check then an unlink by name
 * would remove whatever another process put there in between: the name is renamed aside first (one
 * step), judged there, and unlinked. Aside is `trash` (latch's state, where no process of the
 * workspace writes: removeThroughTrash) where it is on the same file system; else a temp name of this
 * process in `dir`, which a process watching the folder can exchange with another file before the
 * unlink (review g67; docs/security.md). A crash in between leaves it to the next start's sweep
 * (temp-names.ts, sweepTrash), as a half-made write is. Not the file: it is put back (by link: never
 * over a file made at the name since; a folder by rename, while the name is free), or, where it
 * cannot be, kept at `.latch-aside-HEX` (never swept), which is returned.
 */
export function removeIfStill(dir: Folder, name: string, file: { dev: number; ino: number }, trash?: string): Removed {
  if (trash !== undefined) {
    const done = removeThroughTrash(dir, name, file, trash);
    if (done !== undefined) return done;
  }
  const tmp = tempName("rm");
  const abs = path.join(dir.abs, tmp);
  tempWatch.live.add(abs);
  tempWatch.created?.(abs);
  try {
    try {
      renameSync(dir.at(name), dir.at(tmp));
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return { done: "gone" };
      throw err;
    }
    if (!holds(dir.at(tmp), file)) return putBack(dir, tmp, name);
    try {
      unlinkSync(dir.at(tmp));
    } catch (err) {
      putBack(dir, tmp, name); // not removed: where it was (unless a file took the name since)
      throw err;
    }
    return { done: "removed" };
  } finally {
    tempWatch.live.delete(abs);
  }
}

type Removed = { done: "removed" } | { done: "gone" } | { done: "other"; aside?: string };

/** The trash of the state dir `stateDir`: where removals judge the names they take (removeThroughTrash). */
export const trashIn = (stateDir: string) => path.join(stateDir, "trash");

/**
 * removeIfStill through `trash`, a folder of latch's state (outside the workspace, hidden from every
 * sandbox): the name goes there in one step, is judged there, and unlinked there, where no process of
 * the workspace can put another file in its place between the two (review g67 swapped the in-folder
 * temp name with another file between the check and the unlink, and that file was removed).
 * Undefined where the trash is on another file system, or cannot be made: the caller removes in the
 * folder. A crash between the rename and the unlink leaves the file in the trash, for sweepTrash.
 */
function removeThroughTrash(
  dir: Folder,
  name: string,
  file: { dev: number; ino: number },
  trash: string,
): Removed | undefined {
  const tmp = path.join(trash, tempName("rm"));
  try {
    mkdirSync(trash, { recursive: true, mode: 0o700 });
    sweepTrash(trash);
    renameSync(dir.at(name), tmp);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" && existsSync(trash)) return { done: "gone" };
    if (code === "EXDEV" || code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "EROFS")
      return undefined;
    throw err;
  }
  if (!holds(tmp, file)) return putBack(dir, tmp, name);
  try {
    unlinkSync(tmp);
  } catch (err) {
    putBack(dir, tmp, name); // not removed: where it was (unless a file took the name since)
    throw err;
  }
  return { done: "removed" };
}

/**
 * The files a killed process left in the trash (killed between a removal's rename and its unlink):
 * removed, by name, in a folder no other process writes. Usually empty: one listing per removal, and
 * one at each start (src/host/create-host.ts).
 */
export function sweepTrash(trash: string): void {
  let names: string[];
  try {
    names = readdirSync(trash);
  } catch {
    return; // none yet, or unreadable: what is there waits for the next sweep
  }
  for (const name of names) {
    const m = TEMP_RE.exec(name);
    if (!m || m[3] !== TAG || pidAlive(Number(m[2]))) continue;
    try {
      if (lstatSync(path.join(trash, name)).isFile()) unlinkSync(path.join(trash, name));
    } catch {
      // gone already (another latch swept it)
    }
  }
}

/**
 * What was renamed aside to `tmp` (a name in `dir`, or a path in the trash) goes back to `name`, or,
 * where it cannot, to a name in `dir` never swept.
 */
function putBack(dir: Folder, tmp: string, name: string): { done: "other"; aside?: string } {
  const from = path.isAbsolute(tmp) ? tmp : dir.at(tmp);
  try {
    linkSync(from, dir.at(name));
    unlinkSync(from);
    return { done: "other" };
  } catch {
    // the name taken since, a folder, or a file latch may not link (another user's, fs.protected_hardlinks)
  }
  try {
    if (lstatSync(dir.at(name), { throwIfNoEntry: false }) === undefined) {
      renameSync(from, dir.at(name));
      return { done: "other" };
    }
  } catch {
    // kept aside, below
  }
  const aside = `.latch-aside-${randomBytes(6).toString("hex")}`;
  renameSync(from, dir.at(aside));
  return { done: "other", aside };
}

/**
 * The name in the folder still holds the file that was read (same device and inode), or is still
 * missing if none was: else something replaced or made it meanwhile, and the write, based on what
 * was read, would clobber what nobody read. A rename cannot compare and swap: a change after this
 * lstat, or one made in place to the same file, is not seen.
 */
function assertStillRead(dir: Folder, name: string, file: ReadPin["file"], target: Named): void {
  const now = lstatSync(dir.at(name), { throwIfNoEntry: false });
  const same = now !== undefined && file !== null && now.dev === file.dev && now.ino === file.ino;
  if (file === null ? now === undefined : same && (file.ctimeMs === undefined || now.ctimeMs === file.ctimeMs)) return;
  throw changedSinceRead(
    target,
    file === null
      ? "a file was made there"
      : now === undefined
        ? "it was moved away"
        : same
          ? "it was written to"
          : "another file took its place",
  );
}

/** assertStillRead, and the bytes read are still the file's (ReadPin.unchanged). */
export function assertPinHolds(dir: Folder, name: string, pin: ReadPin, target: Named): void {
  // The bytes first (a read of the whole file, up to 8 MiB: a millisecond), the name last: a file put
  // at the name after this look is clobbered by the rename, so the look is the quickest step, right
  // before it (review g67 hit the window 98 times in 100 with the re-read in between).
  if (pin.unchanged && !pin.unchanged()) throw changedSinceRead(target, "it was written to");
  assertStillRead(dir, name, pin.file, target);
}

/** The refusal of a write whose file changed since it was read (`what` happened while this write ran). */
export function changedSinceRead(target: Named, what: string): Refusal {
  return new Refusal(
    `\`${showName(target.rel)}\` changed since you read it (${what} while this write ran); nothing was written.`,
    "Read it again, then retry.",
  );
}
