// A control file kept read-only that is a link (`.git/config -> ../shared/gitconfig`, `.envrc ->
// tools/envrc`): the box's mount follows the link and sits on its target (bwrap.ts), so the target is
// read-only, but the link itself is an entry of a writable folder, and a contained process can put a
// file of its own in its place (review g21: a `core.fsmonitor` ran at the user's `git status`), or
// swap a folder on the way to its target (`mv shared shared.old; mkdir shared`, or re-point a link on
// the way: review g22). So the guard notes each such link before the call (what it says, and where
// it leads) and, when the call is checked, puts back one that was replaced or removed (what
// was in its place is renamed aside, not removed: the user may have replaced it meanwhile, review
// g22), and removes one that now leads elsewhere, saying how to make it again.
import { randomBytes } from "node:crypto";
import { lstatSync, readlinkSync, renameSync, symlinkSync, unlinkSync } from "node:fs";
import path from "node:path";
import { openFolder } from "../fs/beneath.js";
import { osPath, showName } from "../fs/names.js";
import { realpathOf } from "../fs/realpath.js";
import { RUNS_LATER } from "../fs/protected.js";
import { GIT_DIR_READ_ONLY } from "./masks.js";
import type { Undone } from "./guard.js";
import { identity } from "./holds.js";

/**
 * Each held path that is a link: what it says, and where it leads (its real path, and that folder by
 * identity; "" when it leads nowhere). Not the file there by identity: the user's `git config`
 * through the link, or an editor's save, replaces the file in that folder (holds.ts sees to that).
 */
export type HeldLinks = ReadonlyMap<string, { target: string; leadsTo: string }>;

function leadsTo(p: string): string {
  try {
    const real = realpathOf(p);
    return `${real}\0${identity(path.dirname(real))}`;
  } catch {
    return "";
  }
}

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
  const out = new Map<string, { target: string; leadsTo: string }>();
  const paths = [
    ...RUNS_LATER.filter((n) => !n.startsWith(".git/")).map((n) => path.join(root, n)),
    ...gitDirs.flatMap((g) => GIT_DIR_READ_ONLY.map((n) => path.join(g, n))),
    ...nested,
  ];
  for (const p of paths) {
    const at = linkAt(p);
    if (at !== undefined && at !== "other") out.set(p, { target: at.target, leadsTo: leadsTo(p) });
  }
  return out;
}

/**
 * Put back each noted link that is not there as it was (what is in its place renamed aside), and remove
 * one that leads to another entry now; say what was done, or that it could not be.
 */
export function checkHeldLinks(root: string, links: HeldLinks): Undone[] {
  const out: Undone[] = [];
  for (const [p, was] of links) {
    const now = linkAt(p);
    const same = now !== undefined && now !== "other" && now.target === was.target;
    if (same && leadsTo(p) === was.leadsTo) continue;
    const where = showName(path.relative(root, p));
    const shown = `\`${showName(was.target)}\``;
    try {
      const dir = openFolder(root, path.relative(root, path.dirname(p)), { doing: "writing" });
      const name = path.basename(p);
      try {
        if (same) {
          // It says what it said, but leads elsewhere: a folder on its way was swapped or a link on its
          // way re-pointed. Where its file went is not known here; without the link, nothing runs.
          unlinkSync(dir.at(name));
          out.push({
            path: where,
            what: `removed: the link (to ${shown}), kept read-only where it led, leads to another file now (a folder on its way was replaced or re-pointed during the call); make it again with \`ln -s ${showName(was.target)} ${where}\` once its target is as it should be`,
          });
          continue;
        }
        let aside = "";
        if (now !== undefined) {
          aside = `${name}.latch-aside-${randomBytes(6).toString("hex")}`;
          renameSync(dir.at(name), dir.at(aside)); // through the folder's descriptor: a link moves as itself
        }
        symlinkSync(was.target, dir.at(name));
        const kept = aside ? `; what was in its place is kept as \`${showName(aside)}\`` : "";
        out.push({
          path: where,
          what: `restored: the link that was here (to ${shown}), replaced or removed during the call${kept}`,
        });
      } finally {
        dir.close();
      }
    } catch (err) {
      out.push({
        path: where,
        what: `NOT undone (${(err as Error).message}): the link that was here (to ${shown}) is not as it was`,
      });
    }
  }
  return out;
}
