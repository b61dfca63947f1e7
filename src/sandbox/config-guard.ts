// The root repository's `.git/config` around a call in which a person approved a write of it (git
// config, git remote add, git submodule add): the step that writes it runs with the file writable
// (call.ts), every other process of the call without. When the call ends, the keys that changed must be
// the approved ones (git-config.ts's `keys`); any other change is put back as it was, the approved
// keys keep their new values, and the undo is reported like the guard's others. git itself reads the
// two files (`git config --file … --list -z`: it parses, follows no include and runs nothing).
import { execFileSync } from "node:child_process";
import { closeSync, fstatSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beneathMode, openFileAt, openFolder, type Folder } from "../fs/beneath.js";
import { Refusal, errnoCode } from "../errors.js";
import type { Undone } from "./guard.js";

export interface ConfigBaseline {
  root: string;
  /** The git folder, relative to `root` (`.git`, `sub/.git`, `.git/modules/lib`); or the folder of the file a linked config leads to. */
  gitDir?: string;
  /** The file's name there: `config`, or what a linked config leads to. */
  name?: string;
  file: string;
  /** The file's bytes before the call; undefined: there was none. */
  bytes: Buffer | undefined;
  /** The keys the approval covers; one ending in `.` covers its section. */
  allowed: readonly string[];
  /** Besides `allowed`: keys whose change is kept too (a lost hold: those that run nothing, guard.ts). */
  keep?: (key: string, values: readonly string[]) => boolean;
  /** What the restore says the keys put back were (default: beyond the approved change). */
  beyond?: string;
  /**
   * The bytes last found to hold only changes kept (set here): not looked at again. A check that made
   * and removed its restore file each time made a watch event each time (review g22: a loop).
   */
  fine?: Buffer;
}

/**
 * `.git/config`'s bytes when it is a regular file, read through `.git`'s descriptor with no link
 * followed (O_NOFOLLOW): a `.git` or `config` swapped for a link is read as "no file", never where
 * it points (whose bytes a restore would then write into the workspace).
 */
function regularBytes(dir: Folder, name: string): Buffer | undefined {
  let fd: number | null;
  try {
    fd = openFileAt(dir, name);
  } catch (err) {
    // A link (ELOOP) or a folder changed under it: not a file of this repository. Anything else (EACCES,
    // EIO) is not "no file": it reaches the guard, which reports the config as not checked.
    if (notThere(err)) return undefined;
    throw err;
  }
  if (fd === null) return undefined;
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : undefined;
  } finally {
    closeSync(fd);
  }
}

/** A name that is missing, not a folder, or a link (the walk's refusal): nothing of this repository there. */
function notThere(err: unknown): boolean {
  const code = errnoCode(err);
  return err instanceof Refusal || code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP";
}

export function configBaseline(
  root: string,
  allowed: readonly string[],
  gitDir = ".git",
  name = "config",
): ConfigBaseline {
  const file = path.join(root, gitDir, name);
  let dir: Folder;
  try {
    dir = openFolder(root, gitDir, { doing: "reading" });
  } catch (err) {
    if (!notThere(err)) throw err;
    return { root, gitDir, name, file, bytes: undefined, allowed }; // no git folder (missing, or a link): nothing to guard
  }
  try {
    return { root, gitDir, name, file, bytes: regularBytes(dir, name), allowed };
  } finally {
    dir.close();
  }
}

/** git run on a config file only: no system or global config, no repository around it. */
function gitConfig(file: string, args: string[]): string {
  return execFileSync("git", ["config", "--file", file, ...args], {
    cwd: "/",
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** key → its values in order (a key without `=` is a boolean true, as git reads it). */
function entries(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const rec of gitConfig(file, ["--list", "-z"]).split("\0")) {
    if (rec === "") continue;
    const nl = rec.indexOf("\n");
    const [key, value] = nl < 0 ? [rec, "true"] : [rec.slice(0, nl), rec.slice(nl + 1)];
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

function changedKeys(before: Map<string, string[]>, after: Map<string, string[]>): string[] {
  const same = (a: string[] = [], b: string[] = []) => a.length === b.length && a.every((v, i) => v === b[i]);
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => !same(before.get(k), after.get(k))).sort();
}

/**
 * A name in `.git`, through its descriptor: the call's processes may have swapped `.git` for a link by
 * now, and the restore must not land where it points. git, a child process, reaches it through this
 * process's descriptor table (`/proc/<pid>/fd`).
 */
function inFolder(dir: Folder, name: string): string {
  return beneathMode.proc ? `/proc/${process.pid}/fd/${dir.fd}/${name}` : path.join(dir.abs, name);
}

/** Put back what changed beyond the approved keys; say what was put back, or that it could not be. */
export function checkConfig(b: ConfigBaseline, rel: (p: string) => string): Undone[] {
  if (b.bytes === undefined) return [];
  const where = rel(b.file);
  let dir: Folder;
  const gitDir = b.gitDir ?? ".git";
  try {
    dir = openFolder(b.root, gitDir, { doing: "writing" });
  } catch (err) {
    return [{ path: where, what: `NOT undone (${(err as Error).message}): ${gitDir} is no longer the folder it was` }];
  }
  try {
    return checkIn(b, dir, where);
  } finally {
    dir.close();
  }
}

function checkIn(b: ConfigBaseline, dir: Folder, where: string): Undone[] {
  const name = b.name ?? "config";
  const file = inFolder(dir, name);
  const now = regularBytes(dir, name);
  if (now !== undefined && (now.equals(b.bytes!) || b.fine?.equals(now))) return [];
  const covered = (key: string, values: readonly string[] = []) =>
    b.allowed.some((k) => (k.endsWith(".") ? key.startsWith(k) : key === k)) || b.keep?.(key, values) === true;
  const restore = inFolder(dir, `${name}.latch-restore-${process.pid}`);
  try {
    rmSync(restore, { force: true }); // a link planted there goes, not what it points at
    writeFileSync(restore, b.bytes!, { mode: 0o644, flag: "wx" });
    let what: string;
    let kept: string[] = [];
    if (now === undefined) what = "restored: replaced by something other than a file";
    else {
      let after: Map<string, string[]> | undefined;
      try {
        after = entries(file);
      } catch {
        after = undefined; // git cannot read it: nothing of it is kept
      }
      if (after === undefined) what = "restored: git could not read the file the call left";
      else {
        const changed = changedKeys(entries(restore), after);
        const beyond = changed.filter((k) => !covered(k, after.get(k)));
        if (beyond.length === 0) {
          rmSync(restore, { force: true });
          b.fine = now;
          return []; // only the approved change
        }
        kept = changed.filter((k) => covered(k, after.get(k)));
        what = `restored: ${b.beyond ?? "keys beyond the approved change"} (${beyond.join(", ")})`;
        try {
          for (const k of kept) {
            try {
              gitConfig(restore, ["--unset-all", k]);
            } catch {
              // not in the baseline (git exits 5): nothing to unset
            }
            for (const v of after.get(k) ?? []) gitConfig(restore, ["--add", k, v]);
          }
        } catch (err) {
          // A value git cannot be given (review g21: 140 KB, E2BIG): the file as it was, whole, not
          // the call's left in place with what runs programs.
          rmSync(restore, { force: true }); // a link put there goes, not what it points at
          writeFileSync(restore, b.bytes!, { mode: 0o644, flag: "wx" });
          what += `; the other changed keys NOT kept (${(err as Error).message.split("\n")[0]}): the whole file is as it was`;
          kept = [];
        }
      }
    }
    const restored = readFileSync(restore);
    rmSync(file, { recursive: true, force: true });
    renameSync(restore, file);
    b.fine = restored; // what it holds now holds only changes kept
    return [
      {
        path: where,
        what: kept.length
          ? `${what}; ${b.keep ? "the other keys changed" : "the approved keys"} kept (${kept.join(", ")})`
          : what,
      },
    ];
  } catch (err) {
    rmSync(restore, { force: true });
    return [{ path: where, what: `NOT undone (${(err as Error).message}): a change beyond the approved keys` }];
  }
}
