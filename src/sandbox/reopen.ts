// A folder a call made unreadable (`chmod 111`, `000`) hides what it made inside from the guard's
// walk, while git needs only search permission to find a repository there (review g31: `git init
// src`, then `chmod 111 src`; the user's `git status` in src ran its core.fsmonitor). The guard gives
// the folder's owner read, write and search permission back (write: what it holds may have to be set
// aside) and walks again; one it cannot open so loses
// its search permission instead (git cannot enter it then). Through descriptors: a link a background
// process puts in the folder's place is not followed out of the workspace.
import { chmodSync, closeSync, constants, fstatSync, openSync } from "node:fs";
import path from "node:path";
import { openFolder } from "../fs/beneath.js";
import { osPath } from "../fs/names.js";

/** Linux's O_PATH (not in Node's constants): a descriptor for the lookup alone. */
const O_PATH = 0o10000000;
const FLAGS = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;

/** `fn` with a lookup-only descriptor of the folder `dir` (the canonical `root` itself, or below it). */
function withFolder<T>(root: string, dir: string, fn: (fd: number) => T): T {
  let fd: number;
  if (dir === root)
    fd = openSync(osPath(root), FLAGS); // review g32: `chmod 111 .`
  else {
    const parent = openFolder(root, path.relative(root, path.dirname(dir)), { doing: "reading" });
    try {
      fd = openSync(parent.at(path.basename(dir)), FLAGS);
    } finally {
      parent.close();
    }
  }
  try {
    return fn(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Gives the folder `dir` (the canonical `root` or below it) its owner's read, write and search permission:
 * its mode before, or undefined when it had them. Throws where it cannot (gone, a link now, no /proc).
 */
export function giveBackReading(root: string, dir: string): number | undefined {
  return withFolder(root, dir, (fd) => {
    const mode = fstatSync(fd).mode & 0o7777;
    if ((mode & 0o500) === 0o500) return undefined;
    chmodSync(`/proc/self/fd/${fd}`, mode | 0o700);
    return mode;
  });
}

/** Takes every search permission off the folder `dir`, as far as it can (undefined: it could not). */
export function shutFromGit(root: string, dir: string): number | undefined {
  try {
    return withFolder(root, dir, (fd) => {
      const mode = fstatSync(fd).mode & 0o7777;
      chmodSync(`/proc/self/fd/${fd}`, mode & ~0o111);
      return mode;
    });
  } catch {
    return undefined;
  }
}
