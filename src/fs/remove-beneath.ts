// Removing what a contained process made, while such a process may still run (a background one): by
// descriptors, never by a path it can change. The entry's folder is opened by the walk by descriptors
// (a link on the way is refused), each folder below through its parent's descriptor (O_NOFOLLOW), and
// each entry is unlinked through the descriptor of the folder it is in. A folder swapped for a link
// meanwhile makes the open fail or has the link itself removed, never what it leads to; `rm -r` by
// path would follow such a swap out of the workspace (`sub` -> `$HOME` between the check and the rm).
import { randomBytes } from "node:crypto";
import {
  fchmodSync,
  fstatSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { errnoCode, Refusal } from "../errors.js";
import { openChild, openFolder, type Folder } from "./beneath.js";
import { bytesToInternal, showName } from "./names.js";

/**
 * Folders held open at once, one per level: a folder deeper than this below the entry is moved up
 * beside the entry (a rename through both descriptors) and removed from there, so a chain of any
 * depth is removed with a bounded number of descriptors.
 */
const MAX_DEPTH = 64;

/** A name removeBeneath set aside: judged once, it is never a name that runs (a hook is run by its exact name). */
export const SET_ASIDE = /\.latch-aside-[0-9a-f]{12}$/;

/**
 * What removeBeneath did: removed it, found it gone, or renamed it `aside` (`holds`: what of the
 * user's it holds, when `keep` named something; "" when it was set aside only because `aside` was asked).
 */
export type Removal =
  | { done: "removed" }
  | { done: "gone" }
  | {
      done: "aside";
      name: string;
      holds: string;
      /** The folder's mode, when it had to be given its owner's permissions for the rename. */
      opened?: number;
    };

/**
 * Remove the link `abs` (below the canonical `root`), through its folder's descriptor: never a folder
 * (unlink cannot remove one), nor anything but a link. What it led to (as names.ts holds a name), or
 * "gone"; throws when something else is there now.
 */
export function unlinkBeneath(root: string, abs: string): { done: "removed"; target: string } | { done: "gone" } {
  const rel = path.relative(root, abs);
  if (rel === "" || rel === ".." || rel.startsWith("../") || path.isAbsolute(rel))
    throw new Error(`unlinkBeneath: ${abs} is not below ${root}`);
  const top = openFolder(root, path.dirname(rel), { doing: "deleting" });
  try {
    const at = top.at(path.basename(rel));
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined) return { done: "gone" };
    if (!st.isSymbolicLink()) throw new Error(`\`${showName(rel)}\` is no longer a link`);
    const target = bytesToInternal(readlinkSync(at, { encoding: "buffer" }));
    unlinkSync(at);
    return { done: "removed", target };
  } finally {
    top.close();
  }
}

/**
 * Remove `abs` (below the canonical `root`, as latch holds paths: names.ts) and all it holds. Throws
 * when a folder on the way changed (folderChanged) or an entry could not be removed, after removing
 * everything else it could. One that holds what `keep` names (a user's repository a contained process
 * renamed to `.vscode`), or any one when `opts.aside` is set, is renamed beside itself instead,
 * `NAME.latch-aside-HEX`: its name no longer runs, and nothing of it is lost. With `opts.aside`, a
 * folder its owner may not write is given its owner's permissions first (`opened`: its mode before).
 */
export function removeBeneath(root: string, abs: string, keep?: Keep, opts: { aside?: boolean } = {}): Removal {
  const rel = path.relative(root, abs);
  if (rel === "" || rel === ".." || rel.startsWith("../") || path.isAbsolute(rel))
    throw new Error(`removeBeneath: ${abs} is not below ${root}`);
  const top = openFolder(root, path.dirname(rel), { doing: "deleting" });
  try {
    const name = path.basename(rel);
    const holds = keep && keptIn(root, top, name, 0, keep); // looked for first, so that none of it goes
    if (holds !== undefined || opts.aside) {
      const aside = `${name}.latch-aside-${randomBytes(6).toString("hex")}`;
      let opened: number | undefined;
      for (let tries = 0; ; tries++)
        try {
          renameSync(top.at(name), top.at(aside)); // through the folder's descriptor: a link moves as itself
          break;
        } catch (err) {
          const code = errnoCode(err);
          if (code === "ENOENT") return { done: "gone" };
          // A folder its owner may not write (a call's `chmod 555 sub/.git`) kept what the call made
          // there (review g34): given its owner's read, write and search permission; three times at
          // most, as a background process may shut it again at once (review g35).
          if ((code !== "EACCES" && code !== "EPERM") || tries === 3 || !opts.aside)
            throw notRemoved(rel, err as Error);
          const was = openUp(top);
          if (was === undefined) throw notRemoved(rel, err as Error);
          opened ??= was;
        }
      return { done: "aside", name: aside, holds: holds ?? "", ...(opened === undefined ? {} : { opened }) };
    }
    const moved: string[] = [];
    let failed: Error | undefined;
    let there = true;
    const removeIn = remover(root, top, moved, keep ?? (() => undefined));
    try {
      there = removeIn(top, name, 0);
    } catch (err) {
      failed = err as Error; // what was moved up still goes
    }
    for (let name = moved.pop(); name !== undefined; name = moved.pop())
      try {
        // Gone from where it was moved: something in the workspace took it first, with what it holds.
        if (!removeIn(top, name, 0))
          failed ??= new Error(`part of it, moved aside as ${name}, was moved away meanwhile`);
      } catch (err) {
        failed ??= err as Error;
      }
    if (failed !== undefined) throw notRemoved(rel, failed);
    return { done: there ? "removed" : "gone" };
  } finally {
    top.close();
  }
}

/** Gives the folder its owner's read, write and search permission: its mode before, or undefined when it had them. */
export function openUp(dir: Folder): number | undefined {
  const mode = fstatSync(dir.fd).mode & 0o7777;
  if ((mode & 0o700) === 0o700) return undefined;
  fchmodSync(dir.fd, mode | 0o700);
  return mode;
}

/** The error a removal ends with, naming the entry as the workspace does, not by its descriptor's path. */
function notRemoved(rel: string, err: Error): Error {
  if (err instanceof Refusal) return err; // folderChanged names the folder already
  const code = errnoCode(err);
  const why = code ? `${code} on an entry in it` : err.message;
  return Object.assign(new Error(`${showName(rel)} not entirely removed (${why})`), { code });
}

/**
 * What a removal keeps: a description of what an entry is ("a git folder that was there before") for
 * one it must not remove, by its lstat (its identity), else undefined.
 */
export type Keep = (st: Stats) => string | undefined;

/** The first thing `keep` names at or below `name` in `dir` (MAX_DEPTH levels; the removal checks deeper). */
function keptIn(root: string, dir: Folder, name: string, depth: number, keep: Keep): string | undefined {
  let st: Stats;
  try {
    st = lstatSync(dir.at(name));
  } catch {
    return undefined; // gone: the removal says so
  }
  const held = keep(st);
  if (held !== undefined || !st.isDirectory() || depth >= MAX_DEPTH) return held;
  // A folder latch may not read (a chmod: `hooks` at 0100, which git still runs a hook in by name) may
  // hold what was there: renamed aside whole, which needs no reading (review g45: this threw, and the
  // folder and its hook stayed).
  const shut = "a folder latch may not read (shut by a chmod), so what is in it is not known";
  let child: Folder;
  try {
    child = openChild(root, dir, name, "deleting");
  } catch (err) {
    if (errnoCode(err) === "EACCES") return shut;
    throw err;
  }
  try {
    let names: Buffer[];
    try {
      names = readdirSync(child.self(), { encoding: "buffer" });
    } catch (err) {
      if (errnoCode(err) === "EACCES") return shut;
      throw err;
    }
    for (const n of names) {
      const deeper = keptIn(root, child, bytesToInternal(n), depth + 1, keep);
      if (deeper !== undefined) return deeper;
    }
  } finally {
    child.close();
  }
  return undefined;
}

/**
 * Removes `name` in `dir`; a folder past MAX_DEPTH is moved into `top` and its new name put on
 * `moved`. What `keep` names is left (one put there after keptIn looked), and the folder above it too.
 */
function remover(root: string, top: Folder, moved: string[], keep: Keep) {
  const removeIn = (dir: Folder, name: string, depth: number): boolean => {
    const at = dir.at(name);
    let st: Stats;
    try {
      st = lstatSync(at);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return false;
      throw err;
    }
    const held = keep(st);
    if (held !== undefined) throw new Error(`it holds ${held}, left there`);
    if (!st.isDirectory()) {
      unlinkSync(at); // a link is removed itself
      return true;
    }
    if (depth >= MAX_DEPTH) {
      const away = `.latch-removing-${randomBytes(6).toString("hex")}`;
      renameSync(at, top.at(away)); // a link put there meanwhile moves as the link, and is unlinked
      moved.push(away);
      return true;
    }
    const child = openChild(root, dir, name, "deleting");
    let failed: Error | undefined;
    try {
      for (const n of readdirSync(child.self(), { encoding: "buffer" }))
        try {
          removeIn(child, bytesToInternal(n), depth + 1);
        } catch (err) {
          failed ??= err as Error; // the rest still goes
        }
    } finally {
      child.close();
    }
    if (failed !== undefined) throw failed;
    rmdirSync(at); // a link put there meanwhile: ENOTDIR, and it stays
    return true;
  };
  return removeIn;
}
