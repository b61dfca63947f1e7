// Moving a file, removing an empty folder, making a folder: the write-axis operations that are not a
// change of content. Each runs under the mutation locks of the paths it touches, after the same
// folder check as a write. A file's removal goes through changeset.ts (it needs a read, like a write).
import { fstatSync, lstatSync, readdirSync, rmdirSync, type Stats } from "node:fs";
import { link, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { folderChanged, folderGone, lstatBeneath, openFolder, openParent, rootOf, type Folder } from "../fs/beneath.js";
import { withPathLock } from "../fs/lock.js";
import {
  assertFolderUnchanged,
  checkBase,
  checkReadBeforeWrite,
  keepPreImages,
  makeParents,
  reserveMarker,
  settleMarker,
  unreserveMarker,
  type MutationContext,
} from "./mutate.js";
import { toRel, type ResolvedPath } from "../fs/paths.js";
import { readCurrentBytes } from "../fs/current.js";
import { sha256 } from "../fs/text.js";
import { osPath, showName } from "../fs/names.js";

export interface MoveOptions {
  overwrite: boolean;
  /** The destination's base (baseOf when the call started): an overwrite replaces only what was read. */
  destBase: string | null;
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
      if (dest) {
        const cur = (destBytes = await readCurrentBytes(to));
        const sha = cur === null ? null : sha256(cur);
        checkBase(ctx, to, sha, opts.destBase);
        if (sha !== null) checkReadBeforeWrite(ctx, to, sha, "full");
      }
      // For undo: the moved content is kept as the source's pre-image (it may move on, or change, later).
      const moved = ctx.journal ? await readCurrentBytes(from) : null;
      makeParents(to, "moving");
      // Both folders opened by the walk and held: the rename acts through their descriptors, so a
      // folder swapped for a link meanwhile cannot carry the file (or take one) outside the root.
      const src = openParent(from, { doing: "moving" });
      let dst;
      try {
        dst = openParent(to, { doing: "moving" });
      } catch (err) {
        src.dir.close();
        throw err;
      }
      try {
        // The session's read of the file moves with it: reserved at `to` before the rename, settled after (as mutate() does).
        const sha = ctx.ledger.latest(ctx.session, from.abs);
        const kind = sha === undefined ? undefined : ctx.ledger.seen(ctx.session, from.abs, sha);
        const mark = sha !== undefined && kind !== undefined ? sha : undefined;
        if (moved !== null)
          keepPreImages(ctx, [
            { target: from, before: moved, afterSha: null },
            { target: to, before: destBytes, afterSha: sha256(moved) },
          ]);
        if (mark !== undefined) reserveMarker(ctx, to, mark, kind!);
        try {
          src.dir.check();
          dst.dir.check();
          const a = src.dir.at(src.name);
          const b = dst.dir.at(dst.name);
          if (dest) await rename(a, b);
          else await renameNoReplace(a, b, to);
        } catch (err) {
          if (mark !== undefined) unreserveMarker(ctx, to, mark);
          // A folder held open was removed meanwhile (a missing source was reported above).
          if (errnoCode(err) === "ENOENT") {
            const gone = [src.dir, dst.dir].find((d) => fstatSync(d.fd).nlink === 0) ?? src.dir;
            throw folderGone(gone.rel, "moving");
          }
          throw err;
        }
        syncQuietly(dst.dir);
        if (dst.dir.abs !== src.dir.abs) syncQuietly(src.dir);
        ctx.ledger.drop(ctx.session, from.abs);
        let warning: string | undefined;
        if (mark !== undefined) warning = settleMarker(ctx, to, mark);
        else ctx.ledger.drop(ctx.session, to.abs);
        return { overwrote: dest !== null, ...(warning ? { warning } : {}) };
      } finally {
        src.dir.close();
        dst.dir.close();
      }
    }),
  );
}

function syncQuietly(dir: Folder): void {
  try {
    dir.sync();
  } catch {
    // a folder that cannot be synced: the move is done all the same
  }
}

async function renameNoReplace(from: string | Buffer, to: string | Buffer, target: ResolvedPath): Promise<void> {
  try {
    await link(from, to);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST")
      throw new Refusal(
        `\`${showName(target.rel)}\` was created meanwhile; nothing was moved.`,
        "Pass overwrite: true to replace it, or choose another name.",
      );
    // A file system without hard links: a plain rename, checked just before (under the locks).
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") {
      await rename(from, to);
      return;
    }
    if (code === "EXDEV")
      throw new ToolError("EXDEV", `\`${showName(target.rel)}\` is on another file system; move it with the shell.`);
    throw err;
  }
  await unlink(from);
}

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
