// The stat every browse tool starts from, with an error that names the fix when the path is missing.
import type { Stats } from "node:fs";
import { ToolError } from "../errors.js";
import { folderChanged, lstatBeneath } from "../fs/beneath.js";
import type { ResolvedPath } from "../fs/paths.js";

/**
 * What the resolved path is now, through the walk (beneath.ts): no link is followed, so a folder
 * swapped for a link to outside since the path was resolved tells nothing of what is there (review
 * g64: stat() told whether an outside path existed, and was a file or a folder).
 */
export async function statTarget(target: ResolvedPath): Promise<Stats> {
  const st = lstatBeneath(target);
  if (st === undefined)
    throw new ToolError("ENOENT", `\`${target.input}\` does not exist. Check the name with list_dir or find_files.`);
  // The resolver's path is canonical, so a link here was made since: it is not looked through.
  if (st.isSymbolicLink()) throw folderChanged(target.rel, "it is now a link", "reading");
  return st;
}

/** Pipes, sockets and devices are refused: reading one could block the call (and the host) forever. */
export function requireFileOrFolder(st: Stats, target: ResolvedPath): void {
  if (!st.isFile() && !st.isDirectory()) {
    throw new ToolError(
      "ENOTFILE",
      `\`${target.rel}\` is not a regular file or folder (a pipe, socket or device). Pass a file or a folder.`,
    );
  }
}
