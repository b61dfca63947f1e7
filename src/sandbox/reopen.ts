// A folder a call made unreadable (`chmod 111`, `000`) hides what it made inside from the guard's
// walk, while git needs only search permission to find a repository there (review g31: `git init
// src`, then `chmod 111 src`; the user's `git status` in src ran its core.fsmonitor). The guard gives
// the folder's owner read, write and search permission back (write: what it holds may have to be set
// aside) and walks again; one it cannot open so loses
// its search permission instead (git cannot enter it then). Through descriptors: a link a background
// process puts in the folder's place is not followed out of the workspace.
import { chmodSync, closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import path from "node:path";
import { openFolder } from "../fs/beneath.js";
import { osPath, showName } from "../fs/names.js";
import { removeBeneath } from "../fs/remove-beneath.js";
import type { Undone } from "./guard.js";

/** How many times a check gives back reading and walks again, each a level deeper (review g32). */
export const REOPEN_ROUNDS = 16;

/** A mode as people write it: 0555. */
export const modeText = (mode: number) => mode.toString(8).padStart(4, "0");

/** One guard check's view: its root, what its baseline could not see, how it names a path, what it reports. */
export interface ShutCheck {
  root: string;
  unseen: (p: string) => boolean;
  /** Whether the baseline's walk went where the folder is (not below node_modules): of one it did not, it cannot say the call shut it. */
  walked: (p: string) => boolean;
  rel: (p: string) => string;
  out: Undone[];
}

/** How a shut folder came to be, as far as the baseline knows (review g57: a user's own, never walked, was said made so by the call). */
const howShut = (c: ShutCheck, d: string) =>
  c.walked(d)
    ? "made unreadable during the call"
    : "unreadable at this check (latch had not looked there before the call)";

/**
 * The folders this walk could not read that the baseline's could (a call's chmod): their owner's
 * read, write and search permission given back, said in `out`. Whether any was, so that the walk is
 * made again.
 */
export function reopenShut(c: ShutCheck, shut: readonly string[]): boolean {
  let any = false;
  for (const d of shut) {
    if (c.unseen(d)) continue;
    try {
      const was = giveBackReading(c.root, d);
      if (was === undefined) continue;
      any = true;
      c.out.push({
        path: c.rel(d),
        what: `${howShut(c, d)} (mode ${modeText(was)}), which hid what it holds from this check: its owner's read, write and search permission given back`,
      });
    } catch (err) {
      const taken = shutFromGit(c.root, d);
      c.out.push({
        path: c.rel(d),
        what:
          `NOT checked (${(err as Error).message}): ${howShut(c, d)}` +
          (taken === undefined ? "" : "; its search permission taken off, so that git cannot enter it either"),
      });
    }
  }
  return any;
}

/**
 * What is still unreadable after REOPEN_ROUNDS (and was not before the call): set aside whole, as
 * the user would give it back its modes and find a repository the model armed there, unchecked
 * (review g33: 17 folders deep); below an aside nothing is the user's to a later check. Where it
 * cannot be set aside, its search permission is taken off, so that git cannot enter it either.
 * `usersFolder`: whether the folder at a path, as it is now, was the baseline's.
 */
export function setAsideShut(c: ShutCheck, shut: readonly string[], usersFolder: (d: string, st: Stats) => boolean) {
  for (const d of shut) {
    const why = `${howShut(c, d)}, inside more such folders than latch opens: NOT checked`;
    // One given back above and shut again since (a background process re-shutting it: review g34)
    // is not skipped: only one already shut from git is.
    if (c.unseen(d) || c.out.some((u) => u.path === c.rel(d) && u.what.startsWith("NOT "))) continue;
    // A folder of the user's stays where it is (a background process flipping its mode outran the
    // rounds: the user's `.env` went aside with it); the call may have made what it holds.
    // And one a stat cannot see now (a folder above it shut again) is taken for the user's.
    const st = lstatSync(osPath(d), { throwIfNoEntry: false });
    const theirs = st === undefined || usersFolder(d, st);
    let failed = "";
    if (!theirs) {
      try {
        const r = removeBeneath(c.root, d, undefined, { aside: true });
        if (r.done === "aside") {
          // Its search permission off as well: git needs no more to enter what it holds, and a later call
          // could gitlink a repository in it by the name said here (review g55).
          const was = shutFromGit(c.root, path.join(path.dirname(d), r.name));
          const off = was === undefined ? "" : `; its search permission taken off (mode ${modeText(was)} before)`;
          c.out.push({
            path: c.rel(d),
            what: `renamed to \`${showName(r.name)}\` (set aside, not deleted): ${why}${off}`,
          });
          continue;
        }
        failed = " (gone meanwhile)";
      } catch (err) {
        failed = ` (${(err as Error).message})`;
      }
    }
    const was = shutFromGit(c.root, d);
    c.out.push({
      path: c.rel(d),
      what:
        `NOT undone${failed}: ${why}` +
        (was === undefined
          ? ""
          : `; its search permission taken off (mode ${modeText(was)} before), so that git cannot enter it either`),
    });
  }
}

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
function giveBackReading(root: string, dir: string): number | undefined {
  return withFolder(root, dir, (fd) => {
    const mode = fstatSync(fd).mode & 0o7777;
    if ((mode & 0o500) === 0o500) return undefined;
    chmodSync(`/proc/self/fd/${fd}`, mode | 0o700);
    return mode;
  });
}

/** Takes every search permission off the folder `dir`, as far as it can (undefined: it could not). */
function shutFromGit(root: string, dir: string): number | undefined {
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
