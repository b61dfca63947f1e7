// A rebase or cherry-pick stopped in a call (`git rebase -i` with a `break`, a conflict, or state the
// process wrote itself: `rebase-merge/` and `sequencer/` are git's working state, writable in the box)
// runs, at the user's next `git rebase --continue` / `git cherry-pick --continue`, as the user, outside
// the box: each `exec` line of the rebase's todo, and the merge strategy its state names (one git does
// not have built in runs as `git-merge-NAME`, and a NAME with a slash as a path: `a/b` runs the
// workspace's `git-merge-a/b`, review g10). So these are noted before a call, and what appeared during
// it is taken out when it ends: new exec lines commented out, a new strategy of that kind dropped (the
// rest goes on as it was, with git's own strategy); the guard reports it like its other undos.
// Git's own state is never a link, a FIFO or anything but a file in a folder, and git follows what
// it finds there: a state so made (review g15: `rebase-merge` or its todo linked into the workspace,
// the todo a FIFO a background loop feeds) is removed, whoever's the state was before.
import { closeSync, fstatSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openChild, openFileAt, openFolder } from "../fs/beneath.js";
import { errnoCode, Refusal } from "../errors.js";
import { configUnderstood, configValues } from "../fs/git-config.js";
import { removeBeneath } from "../fs/remove-beneath.js";
import type { Undone } from "./guard.js";

/** Where a stopped rebase keeps what is left to do, and its strategy; a stopped cherry-pick its options. */
const TODO = "rebase-merge/git-rebase-todo";
const STRATEGY = "rebase-merge/strategy";
const OPTS = "sequencer/opts";
/** A stopped `git am` (or apply-backend rebase) keeps the options its next `git apply` takes. */
const APPLY_OPT = "rebase-apply/apply-opt";

/** A todo line git runs as a command (sequencer.c: `exec` or `x`, after blanks). */
const EXEC = /^[ \t]*(?:exec|x)(?:[ \t]|$)/;
/**
 * A state file larger than this is not read but removed, whoever's it was: no todo git wrote comes
 * near it (a line a commit: a million commits are ~60 MB), and one past V8's longest string (~512 MB,
 * sparse, taking no disk) threw out of every look, switching the guard off for the workspace (review g43).
 */
const MAX_STATE_BYTES = 64 * 1024 * 1024;
/** The strategies git has built in (merge.c); any other is a program it looks for. */
const BUILT_IN = new Set(["ort", "recursive", "resolve", "octopus", "ours", "subtree"]);

/**
 * The `git apply` options `git am` passes on (builtin/am.c) that only change how a patch applies in the
 * worktree; any other, or a line latch cannot split as git's sq_dequote does, is not kept (review g16:
 * `--build-fake-ancestor=PATH` made the user's `git am --continue` write an index file anywhere).
 */
const APPLY_SAFE =
  /^(?:-p\d+|-C\d+|--whitespace=[a-z-]+|--ignore-whitespace|--ignore-space-change|--reject|--(?:exclude|include)=[^\0]*)$/;

/** `apply-opt` split as git's sq_dequote_to_strvec reads it: `'a' 'b'`, `'\''` inside; undefined when it cannot be. */
function sqArgs(text: string): string[] | undefined {
  const out: string[] = [];
  const line = text.replace(/\n$/, "");
  let i = 0;
  while (i < line.length) {
    if (line[i] === " ") {
      i++;
      continue;
    }
    if (line[i] !== "'") return undefined;
    let arg = "";
    for (i++; ;) {
      const end = line.indexOf("'", i);
      if (end === -1) return undefined;
      arg += line.slice(i, end);
      i = end + 1;
      if (line.startsWith("\\''", i)) {
        arg += "'";
        i += 3;
        continue;
      }
      break;
    }
    out.push(arg);
  }
  return out;
}

/** A value as git's strbuf_trim leaves it: spaces, tabs and line ends off both sides, nothing else. */
const gitTrim = (v: string) => v.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, "");

/** The state a stopped rebase or cherry-pick keeps in a git folder, as it was before a call. */
export interface SequencerState {
  execs: Set<string>;
  strategy?: string;
  opts?: string;
  applyOpt?: string;
}

/** An entry of a git folder's sequencer state that git would follow and latch cannot read as it: removed. */
class OddEntry extends Error {
  constructor(
    /** Below the git folder. */
    readonly rel: string,
    why: string,
    /** Renamed aside, not removed: a folder latch cannot list cannot be removed (review g44). */
    readonly aside = false,
  ) {
    super(why);
  }
}

/**
 * A state latch may not read (EACCES): git, as the user, may all the same (review g44: `rebase-merge`
 * at 0333, which git opens by name to read its todo, was said NOT checked and its new exec line ran).
 */
const shut = (rel: string, err: unknown) =>
  new OddEntry(rel, `one latch may not read (${(err as Error).message}), which git may`, true);

/**
 * `rel` (below the git folder `g`, below `root`) read through descriptors; undefined when it or its
 * folder is not there (or the folder is a file: no state then, to git either). A link, a FIFO or
 * anything else git would read through where latch reads nothing throws OddEntry; EACCES is thrown.
 */
function stateText(root: string, g: string, rel: string): string | undefined {
  const folder = path.dirname(rel);
  // The git folder first, then its state folder through it: a folder on the way git may search and
  // latch may not list (chmod 111) is then not taken for the state folder shut (review g56: a state
  // that was not there said set aside).
  let gd;
  try {
    gd = openFolder(root, path.relative(root, g), { doing: "reading" });
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
  let dir;
  try {
    dir = openChild(root, gd, folder);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "EACCES") throw shut(folder, err);
    // A link where the folder is (the walk's refusal, or ELOOP); any other failure (EMFILE, EIO) is
    // thrown and said NOT checked: removing a real state of the user's for it would lose their rebase.
    if (!(err instanceof Refusal) && code !== "ELOOP") throw err;
    throw new OddEntry(folder, `a link or something git would follow (${(err as Error).message})`);
  } finally {
    gd.close();
  }
  try {
    let fd: number | null;
    try {
      fd = openFileAt(dir, path.basename(rel));
    } catch (err) {
      // O_NOFOLLOW met a link (ELOOP), or a socket (ENXIO); anything else as above.
      if (errnoCode(err) === "EACCES") throw shut(rel, err);
      if (!["ELOOP", "ENXIO"].includes(errnoCode(err) ?? "")) throw err;
      throw new OddEntry(rel, `a link or something git would follow (${(err as Error).message})`);
    }
    if (fd === null) return undefined;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new OddEntry(rel, st.isFIFO() ? "a FIFO" : "not a file");
      if (st.size > MAX_STATE_BYTES) throw new OddEntry(rel, `larger than ${MAX_STATE_BYTES / 1024 / 1024} MiB`);
      return readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } finally {
    dir.close();
  }
}

/** The state now, with the todo's text (the check rewrites it from that one read), and what is odd in it. */
function stateOf(root: string, g: string): SequencerState & { todo?: string; odd: OddEntry[] } {
  const odd: OddEntry[] = [];
  const read = (rel: string) => {
    try {
      return stateText(root, g, rel);
    } catch (err) {
      if (!(err instanceof OddEntry)) throw err;
      if (!odd.some((o) => o.rel === err.rel)) odd.push(err);
      return undefined;
    }
  };
  const todo = read(TODO);
  return {
    todo,
    execs: new Set((todo ?? "").split("\n").filter((l) => EXEC.test(l))),
    strategy: read(STRATEGY),
    opts: read(OPTS),
    applyOpt: read(APPLY_OPT),
    odd,
  };
}

/**
 * The sequencer state of each git folder (key → path), by the folder's key, before a call. One this
 * look could not read (a folder shut by a chmod) counts as none: nothing masks `rebase-merge` in the
 * box, so the call that shut it can open it again, and what is there at the end is judged new (review
 * g16: a null baseline skipped the state, and an exec line added after a `chmod 755` ran). At worst
 * the user's own exec lines there are commented out, and reported.
 */
export function sequencerStates(root: string, gitDirs: ReadonlyMap<string, string>): Map<string, SequencerState> {
  const out = new Map<string, SequencerState>();
  for (const [key, g] of gitDirs) {
    try {
      out.set(key, stateOf(root, g));
    } catch (err) {
      if (errnoCode(err) !== "EACCES") throw err;
      out.set(key, { execs: new Set() });
    }
  }
  return out;
}

/** Replaces `rel` of the git folder `g` by `text` (undefined: removes it, or renames it aside), through its folder's descriptor. */
function replace(root: string, g: string, rel: string, text: string | undefined, aside = false): void {
  const file = path.join(g, rel);
  removeBeneath(root, file, undefined, { aside });
  if (text === undefined) return;
  const dir = openFolder(root, path.relative(root, path.dirname(file)), { doing: "writing" });
  try {
    writeFileSync(dir.at(path.basename(file)), text, { mode: 0o644, flag: "wx" }); // a link made meanwhile: EEXIST
  } finally {
    dir.close();
  }
}

/**
 * Takes out of each git folder's sequencer state (`gitDirs`: key → path now) what runs later and was
 * not there before the call (`before`, sequencerStates'): exec lines, a strategy git has not built in.
 */
export function checkSequencers(
  root: string,
  gitDirs: ReadonlyMap<string, string>,
  before: ReadonlyMap<string, SequencerState>,
  rel: (p: string) => string,
): Undone[] {
  const out: Undone[] = [];
  const undo = (g: string, file: string, text: string | undefined, what: string, aside = false) => {
    try {
      replace(root, g, file, text, aside);
      out.push({ path: rel(path.join(g, file)), what });
    } catch (err) {
      out.push({ path: rel(path.join(g, file)), what: `NOT undone (${(err as Error).message}): ${what}` });
    }
  };
  for (const [key, g] of gitDirs) {
    const was = before.get(key) ?? { execs: new Set<string>() };
    let now: ReturnType<typeof stateOf>;
    try {
      now = stateOf(root, g);
    } catch (err) {
      // Said, and the rest of the guard's check goes on (a throw here lost what it had already undone).
      out.push({ path: rel(g), what: `NOT checked (${(err as Error).message}): a stopped rebase's state` });
      continue;
    }
    for (const o of now.odd)
      undo(
        g,
        o.rel,
        undefined,
        o.aside
          ? `set aside (renamed, not deleted): ${o.message}, in a stopped rebase's or cherry-pick's state (git would read it at the user's \`--continue\`)`
          : `removed: ${o.message}, in a stopped rebase's or cherry-pick's state, where git's own never is (git would follow it at the user's \`--continue\`)`,
        o.aside,
      );
    const todo = now.todo;
    if (todo !== undefined) {
      let n = 0;
      const lines = todo.split("\n").map((l) => (EXEC.test(l) && !was.execs.has(l) ? (n++, `# (latch) ${l}`) : l));
      if (n > 0)
        undo(
          g,
          TODO,
          lines.join("\n"),
          `rewritten: ${n} exec line${n === 1 ? "" : "s"} of a rebase left stopped commented out (they would run at the user's \`git rebase --continue\`)`,
        );
    }
    if (now.strategy !== undefined && now.strategy !== was.strategy && !BUILT_IN.has(gitTrim(now.strategy)))
      undo(
        g,
        STRATEGY,
        undefined,
        `removed: a merge strategy git has not built in, which would run as a program at the user's \`git rebase --continue\``,
      );
    // Read as git reads a config (a key on the header's line, `\r` before a key: review g11), the whole
    // file removed when one value is not built in: the user's --continue goes on with git's defaults.
    // A line this reader does not understand may hide one from it (review g12): removed too.
    if (
      now.opts !== undefined &&
      now.opts !== was.opts &&
      (!configUnderstood(now.opts) ||
        configValues(now.opts, "options", "strategy").some((v) => v === null || !BUILT_IN.has(v)))
    )
      undo(
        g,
        OPTS,
        undefined,
        `removed: options naming a merge strategy git has not built in, or written so that latch cannot be sure they do not (it would run as a program at the user's \`git cherry-pick --continue\`)`,
      );
    if (
      now.applyOpt !== undefined &&
      now.applyOpt !== was.applyOpt &&
      !(sqArgs(now.applyOpt)?.every((a) => APPLY_SAFE.test(a)) ?? false)
    )
      undo(
        g,
        APPLY_OPT,
        undefined,
        `removed: \`git apply\` options of a stopped \`git am\` beyond how a patch applies (\`--build-fake-ancestor\` writes a file wherever it names at the user's \`git am --continue\`)`,
      );
  }
  return out;
}
