// A control file kept read-only that is a link (`.git/config -> ../shared/gitconfig`, `.envrc ->
// tools/envrc`): the box's mount follows the link and sits on its target (bwrap.ts), so the target is
// read-only, but the link itself is an entry of a writable folder, and a contained process can put a
// file of its own in its place (review g21: a `core.fsmonitor` ran at the user's `git status`). So the
// guard notes each such link before the call (with what it says) and, when the call is checked, puts
// back one that was replaced or removed.
import { lstatSync, readlinkSync, symlinkSync } from "node:fs";
import path from "node:path";
import { openFolder } from "../fs/beneath.js";
import { osPath, showName } from "../fs/names.js";
import { RUNS_LATER } from "../fs/protected.js";
import { removeBeneath, type Keep } from "../fs/remove-beneath.js";
import { GIT_DIR_READ_ONLY } from "./masks.js";
import type { Undone } from "./guard.js";

/** Each held path that is a link, with what it says. */
export type HeldLinks = ReadonlyMap<string, { target: string }>;

/**
 * What is at `p`: "link" with its target, "other", or undefined. By kind and target, not by inode: a
 * file made where a link was removed often gets the link's inode number back.
 */
function linkAt(p: string): { target: string } | "other" | undefined {
  try {
    if (!lstatSync(osPath(p)).isSymbolicLink()) return "other";
    return { target: readlinkSync(osPath(p), "utf8") };
  } catch {
    return undefined; // gone (or not to be seen: then the removal below says so)
  }
}

/**
 * The links among what the masks keep read-only: the root's RUNS_LATER names, each git folder's control
 * files, and the RUNS_LATER entries in subfolders (`nested`).
 */
export function heldLinks(root: string, gitDirs: readonly string[], nested: readonly string[] = []): HeldLinks {
  const out = new Map<string, { target: string }>();
  const paths = [
    ...RUNS_LATER.filter((n) => !n.startsWith(".git/")).map((n) => path.join(root, n)),
    ...gitDirs.flatMap((g) => GIT_DIR_READ_ONLY.map((n) => path.join(g, n))),
    ...nested,
  ];
  for (const p of paths) {
    const at = linkAt(p);
    if (at !== undefined && at !== "other") out.set(p, at);
  }
  return out;
}

/** Put back each noted link that is not there as it was; say what was put back, or that it could not be. */
export function checkHeldLinks(root: string, links: HeldLinks, keep: Keep): Undone[] {
  const out: Undone[] = [];
  for (const [p, was] of links) {
    const now = linkAt(p);
    if (now !== undefined && now !== "other" && now.target === was.target) continue;
    const where = showName(path.relative(root, p));
    const what = `the link that was here (to \`${showName(was.target)}\`), kept read-only where it leads, was replaced or removed during the call`;
    try {
      if (now !== undefined) removeBeneath(root, p, keep);
      const dir = openFolder(root, path.relative(root, path.dirname(p)), { doing: "writing" });
      try {
        symlinkSync(was.target, dir.at(path.basename(p))); // through the folder's descriptor
      } finally {
        dir.close();
      }
      out.push({ path: where, what: `restored: ${what}` });
    } catch (err) {
      out.push({ path: where, what: `NOT undone (${(err as Error).message}): ${what}` });
    }
  }
  return out;
}
