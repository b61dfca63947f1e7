// What a contained run with a writable workspace changed, from an lstat of the tree before and after
// (size, mtime, ctime, inode, type; no content is read). latch keeps pre-images only of its own file
// tools' writes, so a shell run's result says which files it changed and that undo cannot restore
// them. The walk never follows a link, skips latch's own files, and stops at MAX_ENTRIES: a larger
// tree is reported as not listed rather than paid for on every call (bench/undo.ts measures it).
// Folders named node_modules or .git are not entered, as the sandbox's walk does not enter them
// (secrets.ts), nor Python's site-packages (a virtual environment's installed packages): each is
// compared by its own lstat, so a package installed, or a commit (git renames its index into place),
// shows as the folder modified. node_modules' tens of thousands of files were most of a JavaScript
// workspace's walk, twice a call (~0.6 s in a pnpm workspace of 16,000 entries, bench/tree-diff.ts),
// and past MAX_ENTRIES nothing was listed; .git was 40% of this repository's.
import { lstatSync, readdirSync, type Dirent } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { NOT_WALKED } from "./not-walked.js";

/** Entries walked at most, before and after each: beyond this the changes are not listed. */
const MAX_ENTRIES = 50_000;
/** Paths named in a result at most; the count says how many changed in all. */
const MAX_LISTED = 200;
/** Folders compared by their own lstat only, not walked. */
const NOT_ENTERED: ReadonlySet<string> = new Set([".git", ...NOT_WALKED]);

type Snapshot = Map<string, string>;

export interface ShellWritesReport {
  /** Root-relative paths (a folder with a trailing slash) and what happened to each. */
  changed: { path: string; change: "created" | "modified" | "deleted" }[];
  count: number;
  note: string;
}

const NOT_COVERED =
  "Files changed by a shell command are not covered by undo (latch keeps the earlier content only of its own file tools' writes).";
const NOT_ENTERED_NOTE =
  " A folder named .git, node_modules or site-packages is not walked: it is listed as modified when an entry is added to it or removed from it, and what changed inside it is not listed.";

export class ShellWrites {
  private constructor(
    private readonly root: string,
    private readonly skip: ReadonlySet<string>,
    private readonly before: Snapshot | undefined,
  ) {}

  /** Snapshot the tree now; `skip`: absolute paths never walked (latch's own files). */
  static start(root: string, skip: readonly string[] = []): ShellWrites {
    const s = new Set(skip);
    return new ShellWrites(root, s, snapshot(root, s));
  }

  /** What changed since start(). */
  report(): ShellWritesReport {
    const after = this.before ? snapshot(this.root, this.skip) : undefined;
    if (!this.before || !after)
      return {
        changed: [],
        count: 0,
        note: `${NOT_COVERED} The workspace holds more than ${MAX_ENTRIES} entries, so the files this run changed are not listed.`,
      };
    const changed: ShellWritesReport["changed"] = [];
    for (const [rel, key] of after) {
      const was = this.before.get(rel);
      if (was === undefined) changed.push({ path: rel, change: "created" });
      else if (was !== key && !key.startsWith("d")) changed.push({ path: rel, change: "modified" });
    }
    for (const rel of this.before.keys()) if (!after.has(rel)) changed.push({ path: rel, change: "deleted" });
    changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const count = changed.length;
    const more = count > MAX_LISTED ? ` Only the first ${MAX_LISTED} of ${count} are listed.` : "";
    const inside = changed.some((c) => c.path.endsWith("/") && NOT_ENTERED.has(path.posix.basename(c.path)))
      ? NOT_ENTERED_NOTE
      : "";
    return { changed: changed.slice(0, MAX_LISTED), count, note: NOT_COVERED + more + inside };
  }
}

/**
 * Every entry under root by relative path (folders end in `/`), keyed by what a change moves; undefined
 * past MAX_ENTRIES. A folder's key is `d` (its own times move with every file made in it: the files
 * say that), a NOT_ENTERED folder's its own times and inode (`n…`), a file's or link's its stat.
 */
function snapshot(root: string, skip: ReadonlySet<string>): Snapshot | undefined {
  const out: Snapshot = new Map();
  const stack = [""];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let entries: Dirent[];
    try {
      // The entries' types come with the listing (Node lstats those the disk does not type): no lstat per folder.
      entries = readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch (err) {
      if (errnoCode(err) !== undefined) continue; // unreadable, gone, too deep, a failing disk: not compared
      throw err;
    }
    for (const entry of entries) {
      const name = entry.name;
      const r = rel === "" ? name : `${rel}/${name}`;
      const abs = path.join(root, r);
      if (skip.has(abs)) continue;
      if (out.size >= MAX_ENTRIES) return undefined;
      if (entry.isDirectory() && !NOT_ENTERED.has(name)) {
        out.set(`${r}/`, "d");
        stack.push(r);
        continue;
      }
      let st;
      try {
        st = lstatSync(abs, { throwIfNoEntry: false });
      } catch (err) {
        // A folder the process made unsearchable, or a path past PATH_MAX: not compared, and the
        // call's result still comes back (this threw out of the call, its result lost).
        if (errnoCode(err) !== undefined) continue;
        throw err;
      }
      if (!st) continue;
      if (st.isDirectory() && NOT_ENTERED.has(name)) out.set(`${r}/`, `n${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
      else if (st.isDirectory()) {
        out.set(`${r}/`, "d");
        stack.push(r);
      } else {
        out.set(r, `${st.isSymbolicLink() ? "l" : "f"}${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.mode}`);
      }
    }
  }
  return out;
}
