// What a contained run with a writable workspace changed, from an lstat of the tree before and after
// (size, mtime, ctime, inode, type; no content is read). latch keeps pre-images only of its own file
// tools' writes, so a shell run's result says which files it changed and that undo cannot restore
// them. The walk never follows a link, skips latch's own files, and stops at MAX_ENTRIES: a larger
// tree is reported as not listed rather than paid for on every call (bench/undo.ts measures it).
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";

/** Entries walked at most, before and after each: beyond this the changes are not listed. */
const MAX_ENTRIES = 50_000;
/** Paths named in a result at most; the count says how many changed in all. */
const MAX_LISTED = 200;

type Snapshot = Map<string, string>;

export interface ShellWritesReport {
  /** Root-relative paths (a folder with a trailing slash) and what happened to each. */
  changed: { path: string; change: "created" | "modified" | "deleted" }[];
  count: number;
  note: string;
}

const NOT_COVERED =
  "Files changed by a shell command are not covered by undo (latch keeps the earlier content only of its own file tools' writes).";

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
    return { changed: changed.slice(0, MAX_LISTED), count, note: NOT_COVERED + more };
  }
}

/** Every entry under root by relative path (folders end in `/`), keyed by what a change moves; undefined past MAX_ENTRIES. */
function snapshot(root: string, skip: ReadonlySet<string>): Snapshot | undefined {
  const out: Snapshot = new Map();
  const stack = [""];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(path.join(root, rel));
    } catch (err) {
      if (errnoCode(err) !== undefined) continue; // unreadable, gone, too deep, a failing disk: not compared
      throw err;
    }
    for (const name of names) {
      const r = rel === "" ? name : `${rel}/${name}`;
      const abs = path.join(root, r);
      if (skip.has(abs)) continue;
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
      if (out.size >= MAX_ENTRIES) return undefined;
      if (st.isDirectory()) {
        out.set(`${r}/`, "d");
        stack.push(r);
      } else {
        out.set(r, `${st.isSymbolicLink() ? "l" : "f"}${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.mode}`);
      }
    }
  }
  return out;
}
