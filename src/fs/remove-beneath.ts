// Removing what a contained process made, while such a process may still run (a background one): by
// descriptors, never by a path it can change. The entry's folder is opened by the walk by descriptors
// (a link on the way is refused), each folder below through its parent's descriptor (O_NOFOLLOW), and
// each entry is unlinked through the descriptor of the folder it is in. A folder swapped for a link
// meanwhile makes the open fail or has the link itself removed, never what it leads to; `rm -r` by
// path would follow such a swap out of the workspace (`sub` -> `$HOME` between the check and the rm).
import { lstatSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { openChild, openFolder, type Folder } from "./beneath.js";
import { bytesToInternal } from "./names.js";

/** Folders deeper than this below the entry are not removed (each level holds a descriptor open). */
const MAX_DEPTH = 256;

/**
 * Remove `abs` (below the canonical `root`, as latch holds paths: names.ts) and all it holds; nothing
 * when it is gone. Throws when a folder on the way changed (folderChanged), or past MAX_DEPTH.
 */
export function removeBeneath(root: string, abs: string): void {
  const rel = path.relative(root, abs);
  if (rel === "" || rel === ".." || rel.startsWith("../") || path.isAbsolute(rel))
    throw new Error(`removeBeneath: ${abs} is not below ${root}`);
  const parent = openFolder(root, path.dirname(rel), { doing: "deleting" });
  try {
    removeIn(root, parent, path.basename(rel), 0);
  } finally {
    parent.close();
  }
}

function removeIn(root: string, dir: Folder, name: string, depth: number): void {
  const at = dir.at(name);
  let isDir: boolean;
  try {
    isDir = lstatSync(at).isDirectory();
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw err;
  }
  if (!isDir) {
    unlinkSync(at); // a link is removed itself
    return;
  }
  if (depth >= MAX_DEPTH) throw new Error(`${dir.rel}/${name} is more than ${MAX_DEPTH} folders deep`);
  const child = openChild(root, dir, name, "deleting");
  try {
    for (const n of readdirSync(child.self(), { encoding: "buffer" }))
      removeIn(root, child, bytesToInternal(n), depth + 1);
  } finally {
    child.close();
  }
  rmdirSync(at); // a link put there meanwhile: ENOTDIR, and it stays
}
