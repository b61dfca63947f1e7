// Moving a file, removing an empty folder, making a folder: the write-axis operations that are not a
// change of content. Each runs under the mutation locks of the paths it touches, after the same
// folder check as a write. A file's removal goes through changeset.ts (it needs a read, like a write).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import { link, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { AlreadyApplied, Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import { folderChanged, folderGone, lstatBeneath, openFolder, openParent, rootOf, type Folder } from "../fs/beneath.js";
import { withPathLock } from "../fs/lock.js";
import {
  assertFolderUnchanged,
  checkBase,
  checkExpected,
  checkReadBeforeWrite,
  keepPreImages,
  makeParentsJournaled,
  reserveMarker,
  settleMarker,
  unreserveMarker,
  type MutationContext,
} from "./mutate.js";
import { toRel, type ResolvedPath } from "../fs/paths.js";
import { readCurrentBytes, readCurrentPinned } from "../fs/current.js";
import { assertPinHolds, changedSinceRead, holds, removeIfStill, type ReadPin } from "../fs/same-file.js";
import { sha256 } from "../fs/text.js";
import { osPath, showName } from "../fs/names.js";

export interface MoveOptions {
  overwrite: boolean;
  /** The destination's base (baseOf when the call started): an overwrite replaces only what was read. */
  destBase: string | null;
  /** The client's expected_sha256 of the file to move. */
  expected?: string;
}

/**
 * rename(2) of one regular file inside the root. Without `overwrite`, an existing destination refuses
 * the move, atomically (link, then unlink: no window where a file created meanwhile is replaced).
 * With it, the destination must have been read whole in this session (its content is lost).
 * The session's read marker moves with the file.
 */
export async function moveFile(
  ctx: MutationContext,
  from: ResolvedPath,
  to: ResolvedPath,
  opts: MoveOptions,
): Promise<{ overwrote: boolean; warning?: string }> {
  if (from.abs === to.abs)
    throw new ToolError("EINVAL", `\`${showName(from.rel)}\` and \`${showName(to.rel)}\` are the same file.`);
  const [a, b] = from.abs < to.abs ? [from, to] : [to, from];
  return withPathLock(ctx.locksDir, a.abs, () =>
    withPathLock(ctx.locksDir, b.abs, async () => {
      await assertFolderUnchanged(ctx, from, "moving");
      await assertFolderUnchanged(ctx, to, "moving");
      if (opts.expected !== undefined) await checkMoveExpected(ctx, from, to, opts.expected);
      regularFile(from, "move");
      const dest = lstatBeneath(to, "moving") ?? null;
      if (dest?.isDirectory())
        throw new ToolError(
          "EISDIR",
          `\`${showName(to.rel)}\` is a folder; pass the file's new path, folder and name.`,
        );
      if (dest && !opts.overwrite)
        throw new Refusal(
          `\`${showName(to.rel)}\` exists; nothing was moved.`,
          "Pass overwrite: true to replace it (after reading it), or choose another name.",
        );
      let destBytes: Buffer | null = null;
      // The file replaced is the one read here, in the folder read through (ReadPin), or none is; the
      // source is pinned too: only the file checked here moves (review g67: an exchanger made another
      // file move in its place). The pins are let go however the move ends (a refusal included).
      let destPin: ReadPin | undefined;
      let source: { bytes: Buffer | null; pin: ReadPin } | undefined;
      try {
        if (dest) {
          const read = await readCurrentPinned(to);
          destPin = read.pin;
          const cur = (destBytes = read.bytes);
          const sha = cur === null ? null : sha256(cur);
          checkBase(ctx, to, sha, opts.destBase);
          if (sha !== null) checkReadBeforeWrite(ctx, to, sha, "full");
        }
        const pinned = (source = await readCurrentPinned(from));
        checkSourcePinned(ctx, from, pinned.bytes, opts.expected);
        // For undo: the moved content is kept as the source's pre-image (it may move on, or change, later).
        const movedBytes = ctx.journal ? pinned.bytes : null;
        const keep = async () => {
          if (movedBytes !== null)
            await keepPreImages(ctx, [
              { target: from, before: movedBytes, afterSha: null },
              { target: to, before: destBytes, afterSha: sha256(movedBytes) },
            ]);
        };
        // Folders made for `to` are journaled first and removed again if the move does not land (fs/journal.ts).
        const parents = makeParentsJournaled(ctx, to, "moving");
        let moved = false;
        try {
          const out = await renameHeld(ctx, from, to, { dest: destPin, source: pinned.pin }, keep);
          moved = true;
          return out;
        } finally {
          parents.finish(!moved);
        }
      } finally {
        destPin?.close();
        source?.pin.close();
      }
    }),
  );
}

/** The rename itself, through both folders opened by the walk; the session's read marker moves with the file. */
async function renameHeld(
  ctx: MutationContext,
  from: ResolvedPath,
  to: ResolvedPath,
  /**
   * The source's read, renamed from its folder, and when overwriting the destination's, whose folder
   * the rename goes into (none: a move to a new name).
   */
  pins: { dest?: ReadPin; source: ReadPin },
  /** Keeps the pre-images for undo, after the checks and before anything moves. */
  keep: () => Promise<void>,
): Promise<{ overwrote: boolean; warning?: string }> {
  // Both folders opened by the walk and held: the rename acts through their descriptors, so a
  // folder swapped for a link meanwhile cannot carry the file (or take one) outside the root.
  const src = pins.source.dir
    ? { dir: pins.source.dir, name: path.posix.basename(from.rel) }
    : openParent(from, { doing: "moving" });
  const ownSrc = src.dir !== pins.source.dir;
  let dst;
  try {
    dst = pins.dest?.dir
      ? { dir: pins.dest.dir, name: path.posix.basename(to.rel) }
      : openParent(to, { doing: "moving" });
  } catch (err) {
    if (ownSrc) src.dir.close();
    throw err;
  }
  const ownDst = dst.dir !== pins.dest?.dir;
  try {
    // The session's read of the file moves with it: reserved at `to` before the rename, settled after (as mutate() does).
    const sha = ctx.ledger.latest(ctx.session, from.abs);
    const kind = sha === undefined ? undefined : ctx.ledger.seen(ctx.session, from.abs, sha);
    const mark = sha !== undefined && kind !== undefined ? sha : undefined;
    await keep();
    if (mark !== undefined) reserveMarker(ctx, to, mark, kind!, mark);
    let left: string | undefined; // what another process put at `from` meanwhile, and where it is
    try {
      src.dir.check();
      dst.dir.check();
      if (pins.dest) renameOverRead(src, dst, { dest: pins.dest, source: pins.source }, from, to);
      else left = await renameNoReplace(ctx, { ...src, target: from }, { ...dst, target: to }, pins.source);
    } catch (err) {
      // A move left at both paths keeps its marker at `to`: recovery settles it when it finishes the move.
      if (mark !== undefined && !(err instanceof HalfMoved)) unreserveMarker(ctx, to, mark);
      // A folder held open was removed meanwhile, or else the file was moved or removed since it was checked.
      if (errnoCode(err) === "ENOENT") {
        const gone = [src.dir, dst.dir].find((d) => fstatSync(d.fd).nlink === 0);
        if (gone) throw folderGone(gone.rel, "moving");
        throw new ToolError(
          "ENOENT",
          `\`${showName(from.rel)}\` was moved or removed while it was being moved; nothing was moved. Check it with list_dir.`,
        );
      }
      throw err;
    }
    syncQuietly(dst.dir);
    if (dst.dir.abs !== src.dir.abs) syncQuietly(src.dir);
    ctx.ledger.drop(ctx.session, from.abs);
    let settled: string | undefined;
    if (mark !== undefined) settled = settleMarker(ctx, to, mark);
    else ctx.ledger.drop(ctx.session, to.abs);
    const warning = [left, settled].filter((w) => w !== undefined).join(" ");
    return { overwrote: pins.dest !== undefined, ...(warning ? { warning } : {}) };
  } finally {
    if (ownSrc) src.dir.close();
    if (ownDst) dst.dir.close();
  }
}

/**
 * The source of an overwrite, as pinned: a file, the bytes this session read of it if it read it (the
 * checks before the pin went by name), and the client's expected bytes.
 */
function checkSourcePinned(
  ctx: MutationContext,
  from: ResolvedPath,
  bytes: Buffer | null,
  expected: string | undefined,
): void {
  if (bytes === null) throw sourceChanged(showName(from.rel));
  const sha = sha256(bytes);
  if (expected !== undefined) checkExpected(ctx, from, sha, expected);
  const read = ctx.ledger.latest(ctx.session, from.abs);
  if (read !== undefined && read !== sha) throw changedSinceRead(from, "another file or other bytes took its place");
}

/**
 * An overwrite's rename: only the file read at `to` is replaced, and only the file pinned at `from`
 * moves (each pin's bytes, then its name, looked at last: assertPinHolds); what landed at `to` is then
 * checked to be it. A rename cannot compare and swap: a change in the microseconds between the last
 * look and the rename is not seen, but one that moved another file is reported, not called a move.
 */
function renameOverRead(
  src: { dir: Folder; name: string },
  dst: { dir: Folder; name: string },
  pins: { dest: ReadPin; source: ReadPin },
  from: ResolvedPath,
  to: ResolvedPath,
): void {
  const moving = pins.source.file;
  if (moving === null) throw sourceChanged(showName(from.rel));
  assertPinHolds(dst.dir, dst.name, pins.dest, to);
  assertPinHolds(src.dir, src.name, pins.source, from);
  renameSync(src.dir.at(src.name), dst.dir.at(dst.name)); // sync: no trip to the thread pool after the looks
  if (!holds(dst.dir.at(dst.name), moving))
    throw new Refusal(
      `Another process put its own file at \`${showName(from.rel)}\` as it was moved: \`${showName(to.rel)}\` now holds that file, not the one checked, which is no longer at \`${showName(from.rel)}\` either.`,
      "Check both paths with stat_file, then retry.",
    );
}

/**
 * expected_sha256 of a move: the file at `from` must hold those bytes. Gone from `from` and at `to`
 * with them, moved there by this very call (its record, kept with the read marker that moved), the
 * move already landed. A file gone with no such record is left to regularFile's "does not exist".
 */
async function checkMoveExpected(ctx: MutationContext, from: ResolvedPath, to: ResolvedPath, expected: string) {
  const cur = await readCurrentBytes(from);
  if (cur !== null) return checkExpected(ctx, from, sha256(cur), expected);
  const there = await readCurrentBytes(to);
  if (there === null || sha256(there) !== expected || ctx.call === undefined) return;
  if (ctx.ledger.applied(ctx.session, to.abs, expected, expected, ctx.call))
    throw new AlreadyApplied(showName(to.rel), expected);
}

function syncQuietly(dir: Folder): void {
  try {
    dir.sync();
  } catch {
    // a folder that cannot be synced: the move is done all the same
  }
}

/** The file is at both paths until the next call finishes the move (journal.ts). */
class HalfMoved extends ToolError {}

interface Held {
  dir: Folder;
  name: string;
  target: ResolvedPath;
}

/**
 * Move without replacing: link the new name, then unlink the old one (a file created at `to`
 * meanwhile refuses the link; nothing is replaced). The step is journaled before the link, so a
 * kill between the two is finished at the next start or write call (fs/journal.ts). A failed unlink
 * removes the new link again; if that fails too, the step is left to the next call, and the error
 * says the file is at both paths until then.
 */
async function renameNoReplace(ctx: MutationContext, from: Held, to: Held, pin: ReadPin): Promise<string | undefined> {
  // The source, opened and held to the end: its inode number stays its own meanwhile (a file that
  // lost its last link and that nothing holds frees it for the next file made: review g66), so the
  // checks below by device and inode name it alone.
  let fd: number;
  try {
    fd = openSync(from.dir.at(from.name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (errnoCode(err) === "ELOOP") throw sourceChanged(showName(from.target.rel));
    throw err; // ENOENT: the caller says the file (or a folder) went
  }
  try {
    const st = fstatSync(fd);
    // The file opened is the one pinned and checked (its expected bytes, its pre-image), unchanged.
    if (pin.file === null || st.dev !== pin.file.dev || st.ino !== pin.file.ino)
      throw sourceChanged(showName(from.target.rel));
    if (pin.unchanged && !pin.unchanged()) throw changedSinceRead(from.target, "it was written to");
    return await linkThenUnlink(ctx, from, to, st);
  } finally {
    closeSync(fd);
  }
}

/** renameNoReplace's link, check and unlink, while the source (`st`) is held open. Returns what another process left at `from`. */
async function linkThenUnlink(ctx: MutationContext, from: Held, to: Held, st: Stats): Promise<string | undefined> {
  const a = from.dir.at(from.name);
  const b = to.dir.at(to.name);
  const [f, t] = [showName(from.target.rel), showName(to.target.rel)];
  if (!st.isFile()) throw sourceChanged(f);
  const step = ctx.ledger.beginMove({ from: place(from.target), to: place(to.target), dev: st.dev, ino: st.ino });
  try {
    await link(a, b);
    // link() goes by name: what it linked must be the file checked, else that link goes again.
    const linked = lstatSync(b, { throwIfNoEntry: false });
    if (linked !== undefined && (linked.dev !== st.dev || linked.ino !== st.ino)) {
      removeIfStill(to.dir, to.name, linked, ctx.trash);
      throw sourceChanged(f);
    }
  } catch (err) {
    ctx.ledger.journal.done(step);
    const code = errnoCode(err);
    if (err instanceof Refusal) throw err;
    if (code === "EEXIST") throw createdMeanwhile(t);
    // No hard link to this file (a file system without them, or another user's file under
    // fs.protected_hardlinks): the name is claimed with a new empty file first, then renamed over.
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") {
      await renameOverClaim(from, to, st);
      return undefined;
    }
    if (code === "EXDEV") throw new ToolError("EXDEV", `\`${t}\` is on another file system; move it with the shell.`);
    if (code === "ENOENT") throw err; // a folder went: the caller names it
    throw new ToolError(
      ioCode(code),
      `\`${t}\` could not be made (${code ?? String(err)}); nothing was moved: the file is still at \`${f}\`.`,
    );
  }
  let out: ReturnType<typeof removeIfStill>;
  try {
    // The old name goes only while it still holds the file linked: one another process put there
    // since is its own, and stays (our file is then at `to` alone: moved all the same).
    out = removeIfStill(from.dir, from.name, st, ctx.trash);
  } catch (err) {
    const code = errnoCode(err) ?? String(err);
    try {
      await unlink(b);
    } catch (undo) {
      ctx.ledger.journal.abandon(step);
      throw new HalfMoved(
        ioCode(errnoCode(err)),
        `Moving \`${f}\` to \`${t}\` stopped half way: the file is now at both paths (its old name could not be removed: ${code}; nor the new one: ${errnoCode(undo) ?? String(undo)}). latch removes \`${f}\` before the next write call; until then, change it only at \`${t}\`.`,
      );
    }
    ctx.ledger.journal.done(step);
    throw new ToolError(
      ioCode(errnoCode(err)),
      `\`${f}\` could not be removed from its folder (${code}), so the move was undone: nothing was moved, the file is still at \`${f}\`.`,
    );
  }
  ctx.ledger.journal.done(step);
  if (out.done !== "other") return undefined;
  const where = out.aside
    ? `kept as \`${showName(from.dir.rel === "." ? out.aside : `${from.dir.rel}/${out.aside}`)}\``
    : "left there";
  return `Another process put a file at \`${f}\` while it was moved; that file was ${where}.`;
}

const sourceChanged = (f: string) =>
  new Refusal(
    `\`${f}\` changed while it was being moved (another file or a folder took its place); nothing was moved.`,
    "Check it with stat_file, then retry.",
  );

/**
 * A move that must not replace, without link(): `to` is made empty (O_EXCL: it must not exist), and
 * `from` is renamed over it only while `from` is still the file checked (`st`: a folder swapped in is
 * not moved) and `to` still the empty file made (a file another process put there stays). A rename
 * cannot compare and swap: a change between these lstats and the rename is not seen.
 */
async function renameOverClaim(from: Held, to: Held, st: Stats): Promise<void> {
  const [a, b] = [from.dir.at(from.name), to.dir.at(to.name)];
  const [f, t] = [showName(from.target.rel), showName(to.target.rel)];
  let fd: number;
  try {
    fd = openSync(b, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if (errnoCode(err) !== "EEXIST") throw err;
    throw createdMeanwhile(t);
  }
  // Held open to the end: its inode number cannot go to another file meanwhile (see pinOf in current.ts).
  try {
    await claimed(a, b, f, t, st, fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** renameOverClaim's checks and rename, while the claim (`b`, the empty file `claim`) is held open. */
async function claimed(a: string | Buffer, b: string | Buffer, f: string, t: string, st: Stats, claim: Stats) {
  const dropClaim = () => {
    if (holds(b, claim)) unlinkSync(b);
  };
  if (!st.isFile() || !holds(a, st)) {
    dropClaim();
    throw sourceChanged(f);
  }
  if (!holds(b, claim)) throw createdMeanwhile(t);
  try {
    await rename(a, b);
  } catch (err) {
    dropClaim();
    throw err;
  }
}

const createdMeanwhile = (t: string) =>
  new Refusal(
    `\`${t}\` was created meanwhile; nothing was moved.`,
    "Pass overwrite: true to replace it, or choose another name.",
  );

const place = (p: ResolvedPath) => ({ abs: p.abs, rel: p.rel });

function regularFile(p: ResolvedPath, verb: string): void {
  const st = lstatBeneath(p, "moving");
  if (!st)
    throw new ToolError("ENOENT", `\`${showName(p.rel)}\` does not exist; nothing to ${verb}. Check it with list_dir.`);
  if (st.isDirectory())
    throw new Refusal(
      `\`${showName(p.rel)}\` is a folder; ${verb === "move" ? "move_file moves files" : "only files"}.`,
      "Move a folder's files one by one, or use the shell (`mv`).",
    );
  if (!st.isFile())
    throw new ToolError("EINVAL", `\`${showName(p.rel)}\` is not a regular file (a link, pipe or device).`);
}

/** Remove an empty folder. A folder with entries is refused, with how many it holds. */
export async function removeEmptyFolder(ctx: MutationContext, dir: ResolvedPath): Promise<void> {
  if (dir.rel === ".") throw new Refusal("The workspace root cannot be deleted.", "Delete files inside it instead.");
  await withPathLock(ctx.locksDir, dir.abs, async () => {
    // The folder itself is listed, and removed from its parent, through descriptors the walk opened.
    const { dir: parent, name } = openParent(dir, { doing: "deleting" });
    try {
      const self = openFolder(rootOf(dir), dir.rel, { doing: "deleting" });
      let names: string[];
      try {
        names = readdirSync(self.self());
      } finally {
        self.close();
      }
      if (names.length > 0)
        throw new Refusal(
          `\`${showName(dir.rel)}\` is a folder with ${names.length} entr${names.length === 1 ? "y" : "ies"}; only an empty folder is deleted.`,
          "Delete its files first (each needs a read), or ask the user to remove the folder.",
        );
      parent.check();
      rmdirSync(parent.at(name));
      syncQuietly(parent);
    } finally {
      parent.close();
    }
  });
}

/** Make a folder and its missing parents, each through its parent's descriptor; returns whether anything was made. */
export async function makeFolder(ctx: MutationContext, dir: ResolvedPath): Promise<boolean> {
  return withPathLock(ctx.locksDir, dir.abs, async () => {
    await assertFolderPath(dir);
    const st = lstatBeneath(dir, "making");
    if (st?.isDirectory()) return false;
    if (st) throw new ToolError("EEXIST", `\`${showName(dir.rel)}\` exists and is not a folder.`);
    const made = openFolder(rootOf(dir), dir.rel, { create: true, doing: "making" });
    made.close();
    return made.made.length > 0;
  });
}

/** The nearest existing ancestor must be a folder. */
export async function assertFolderPath(target: ResolvedPath): Promise<void> {
  for (let dir = path.dirname(target.abs); ; dir = path.dirname(dir)) {
    const st = lstatOrNull(dir);
    if (!st) continue;
    if (st.isDirectory()) return;
    if (st.isSymbolicLink()) throw folderChanged(toRel(rootOf(target), dir), "it is now a link", "writing");
    throw new ToolError(
      "ENOTDIR",
      `\`${showName(target.rel)}\` cannot be made: \`${showName(path.basename(dir))}\` on its path is a file, not a folder; nothing was changed.`,
    );
  }
}

function lstatOrNull(p: string): Stats | null {
  return lstatSync(osPath(p), { throwIfNoEntry: false }) ?? null;
}
