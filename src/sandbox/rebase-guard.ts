// An interactive rebase stopped in a call (`git rebase -i` with a `break`, a conflict, or a todo the
// process wrote itself: `rebase-merge/` is git's working state, writable in the box) runs each `exec`
// line of its todo at the user's next `git rebase --continue`, as the user, outside the box. So the
// todo's exec lines are noted before a call, and a line that appeared during it is commented out when
// it ends (the rest of the rebase goes on as it was); the guard reports it like its other undos.
import { closeSync, fstatSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openFileAt, openFolder } from "../fs/beneath.js";
import { errnoCode } from "../errors.js";
import { removeBeneath } from "../fs/remove-beneath.js";
import type { Undone } from "./guard.js";

/** Where a stopped rebase keeps what is left to do, in a git folder. */
const TODO = ["rebase-merge", "git-rebase-todo"] as const;

/** A todo line git runs as a command (sequencer.c: `exec` or `x`, after blanks). */
const EXEC = /^[ \t]*(?:exec|x)(?:[ \t]|$)/;

/** The todo's text in the git folder `g` (below `root`), read through descriptors; undefined when there is none. */
function todoText(root: string, g: string): string | undefined {
  let dir;
  try {
    dir = openFolder(root, path.relative(root, path.join(g, TODO[0])), { doing: "reading" });
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
  try {
    const fd = openFileAt(dir, TODO[1]);
    if (fd === null) return undefined;
    try {
      return fstatSync(fd).isFile() ? readFileSync(fd, "utf8") : undefined;
    } finally {
      closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/**
 * The exec lines of each git folder's stopped rebase, by the folder's key, before a call; null for a
 * todo this look could not read (a folder shut by a background chmod): what is there later is not
 * judged new, as the guard leaves alone what its first look could not see.
 */
export function rebaseExecs(root: string, gitDirs: ReadonlyMap<string, string>): Map<string, Set<string> | null> {
  const out = new Map<string, Set<string> | null>();
  for (const [key, g] of gitDirs) {
    try {
      const text = todoText(root, g);
      if (text !== undefined) out.set(key, new Set(text.split("\n").filter((l) => EXEC.test(l))));
    } catch (err) {
      if (errnoCode(err) !== "EACCES") throw err;
      out.set(key, null);
    }
  }
  return out;
}

/**
 * Comments out the exec lines of each git folder's todo (`gitDirs`: key → path now) that were not
 * there before the call (`before`, rebaseExecs'), rewriting the todo through its folder's descriptor.
 */
export function checkRebases(
  root: string,
  gitDirs: ReadonlyMap<string, string>,
  before: ReadonlyMap<string, ReadonlySet<string> | null>,
  rel: (p: string) => string,
): Undone[] {
  const out: Undone[] = [];
  for (const [key, g] of gitDirs) {
    const file = path.join(g, ...TODO);
    try {
      const had = before.get(key) ?? new Set<string>();
      if (had === null) continue;
      const text = todoText(root, g);
      if (text === undefined) continue;
      let n = 0;
      const lines = text.split("\n").map((l) => (EXEC.test(l) && !had.has(l) ? (n++, `# (latch) ${l}`) : l));
      if (n === 0) continue;
      removeBeneath(root, file);
      const dir = openFolder(root, path.relative(root, path.dirname(file)), { doing: "writing" });
      try {
        writeFileSync(dir.at(TODO[1]), lines.join("\n"), { mode: 0o644, flag: "wx" }); // a link made meanwhile: EEXIST
      } finally {
        dir.close();
      }
      out.push({
        path: rel(file),
        what: `rewritten: ${n} exec line${n === 1 ? "" : "s"} of a rebase left stopped commented out (they would run at the user's \`git rebase --continue\`)`,
      });
    } catch (err) {
      out.push({ path: rel(file), what: `NOT undone (${(err as Error).message}): exec lines of a stopped rebase` });
    }
  }
  return out;
}
