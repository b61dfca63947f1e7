// Moving a file, removing an empty folder, making a folder: the write-axis operations that are not a
// change of content. Each runs under the mutation locks of the paths it touches, after the same
// folder check as a write. A file's removal goes through changeset.ts (it needs a read, like a write).
import type { Stats } from "node:fs";
import { link, lstat, mkdir, readdir, rename, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { syncDir } from "../fs/atomic-write.js";
import { withPathLock } from "../fs/lock.js";
import {
  assertFolderUnchanged,
  checkBase,
  checkReadBeforeWrite,
  reserveMarker,
  settleMarker,
  unreserveMarker,
  type MutationContext,
} from "./mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
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
      await assertFolderUnchanged(ctx, from);
      await assertFolderUnchanged(ctx, to);
      await regularFile(from, "move");
      const dest = await lstatOrNull(to.abs);
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
      if (dest) {
        const cur = await readCurrentBytes(to);
        const sha = cur === null ? null : sha256(cur);
        checkBase(ctx, to, sha, opts.destBase);
        if (sha !== null) checkReadBeforeWrite(ctx, to, sha, "full");
      }
      await mkdir(osPath(path.dirname(to.abs)), { recursive: true });
      await assertFolderUnchanged(ctx, to);
      // The session's read of the file moves with it: reserved at `to` before the rename, settled after (as mutate() does).
      const sha = ctx.ledger.latest(ctx.session, from.abs);
      const kind = sha === undefined ? undefined : ctx.ledger.seen(ctx.session, from.abs, sha);
      const mark = sha !== undefined && kind !== undefined ? sha : undefined;
      if (mark !== undefined) reserveMarker(ctx, to, mark, kind!);
      try {
        if (dest) await rename(osPath(from.abs), osPath(to.abs));
        else await renameNoReplace(from.abs, to.abs, to);
      } catch (err) {
        if (mark !== undefined) unreserveMarker(ctx, to, mark);
        throw err;
      }
      await syncDir(path.dirname(to.abs)).catch(() => undefined);
      if (path.dirname(to.abs) !== path.dirname(from.abs)) await syncDir(path.dirname(from.abs)).catch(() => undefined);
      ctx.ledger.drop(ctx.session, from.abs);
      let warning: string | undefined;
      if (mark !== undefined) warning = settleMarker(ctx, to, mark);
      else ctx.ledger.drop(ctx.session, to.abs);
      return { overwrote: dest !== null, ...(warning ? { warning } : {}) };
    }),
  );
}

async function renameNoReplace(from: string, to: string, target: ResolvedPath): Promise<void> {
  try {
    await link(osPath(from), osPath(to));
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST")
      throw new Refusal(
        `\`${showName(target.rel)}\` was created meanwhile; nothing was moved.`,
        "Pass overwrite: true to replace it, or choose another name.",
      );
    // A file system without hard links: a plain rename, checked just before (under the locks).
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EMLINK") {
      await rename(osPath(from), osPath(to));
      return;
    }
    if (code === "EXDEV")
      throw new ToolError("EXDEV", `\`${showName(target.rel)}\` is on another file system; move it with the shell.`);
    throw err;
  }
  await unlink(osPath(from));
}

async function regularFile(p: ResolvedPath, verb: string): Promise<void> {
  const st = await lstatOrNull(p.abs);
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
    await assertFolderUnchanged(ctx, dir);
    const names = await readdir(osPath(dir.abs));
    if (names.length > 0)
      throw new Refusal(
        `\`${showName(dir.rel)}\` is a folder with ${names.length} entr${names.length === 1 ? "y" : "ies"}; only an empty folder is deleted.`,
        "Delete its files first (each needs a read), or ask the user to remove the folder.",
      );
    await rmdir(osPath(dir.abs));
    await syncDir(path.dirname(dir.abs)).catch(() => undefined);
  });
}

/** Make a folder and its missing parents; returns whether anything was made. */
export async function makeFolder(ctx: MutationContext, dir: ResolvedPath): Promise<boolean> {
  return withPathLock(ctx.locksDir, dir.abs, async () => {
    await assertFolderPath(dir);
    const st = await lstatOrNull(dir.abs);
    if (st?.isDirectory()) return false;
    if (st) throw new ToolError("EEXIST", `\`${showName(dir.rel)}\` exists and is not a folder.`);
    await mkdir(osPath(dir.abs), { recursive: true });
    await assertFolderUnchanged(ctx, dir);
    return true;
  });
}

/** The nearest existing ancestor must be a folder. */
export async function assertFolderPath(target: ResolvedPath): Promise<void> {
  for (let dir = path.dirname(target.abs); ; dir = path.dirname(dir)) {
    const st = await lstatOrNull(dir);
    if (!st) continue;
    if (st.isDirectory()) return;
    throw new ToolError(
      "ENOTDIR",
      `\`${showName(target.rel)}\` cannot be made: \`${showName(path.basename(dir))}\` on its path is a file, not a folder; nothing was changed.`,
    );
  }
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await lstat(osPath(p));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
}
