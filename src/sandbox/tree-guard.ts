// What the user's git writes into the worktree from its own records: `git checkout .`, `git restore`,
// `git reset --hard` and `git stash` put back the index's or HEAD's version of each tracked file. The
// box keeps the worktree's runs-later files read-only (RUNS_LATER, and the hooks folder and includes
// the config names), but a contained process can stage its own version of one (`git hash-object -w`,
// `git update-index --cacheinfo`) or commit it: the user who then discards the call's changes writes
// the model's hook, and their next commit runs it (tried for real: docs/security.md). So, for the root's
// repository, the entries of those paths in the index and HEAD's commit are noted before a call, and
// after it an index entry the call changed is put back, and a HEAD whose commit changes one is moved
// back (the commit kept on a branch of its own, its other changes left staged).
import { execFileSync } from "node:child_process";
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import { runsLaterByConfig } from "../fs/git-config.js";
import { isInside } from "../fs/paths.js";
import { RUNS_LATER } from "../fs/protected.js";
import type { Undone } from "./guard.js";

/**
 * What git holds of the runs-later paths, and the stamp of the files it was read from: as before the
 * call, and then as each check last found it (a commit that leaves them alone becomes the one to keep).
 */
export interface TreeBaseline {
  stamp: string;
  /** `refs/heads/…` HEAD names, or undefined when detached. */
  ref?: string;
  /** HEAD's commit, or undefined on an unborn branch. */
  commit?: string;
  /** `git ls-files -s` of the runs-later paths: `mode sha stage\tpath` each. */
  entries: string[];
}

/** Pathspecs of what runs later: each RUNS_LATER name anywhere, and what the root's config names in the worktree. */
function pathspecs(root: string): string[] {
  const names = RUNS_LATER.filter((n) => !n.startsWith(".git/")).flatMap((n) => [
    `:(glob)**/${n}`,
    `:(glob)**/${n}/**`,
  ]);
  const named = runsLaterByConfig(root)
    .filter((p) => isInside(root, p) && p !== root && !isInside(path.join(root, ".git"), p))
    .map((p) => `:(literal)${path.relative(root, p)}`);
  return [...names, ...named];
}

/** git on the root's repository, outside the box, with nothing of the repository's that runs a program. */
function git(root: string, args: string[], input?: string): string {
  return execFileSync(
    "git",
    ["--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", ...args],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_DIR: path.join(root, ".git"),
        GIT_WORK_TREE: root,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        // The reflog's line for a HEAD moved back, without the user's identity (no global config here).
        GIT_COMMITTER_NAME: "latch",
        GIT_COMMITTER_EMAIL: "latch@localhost",
      },
      encoding: "utf8",
      input,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
      // A ref the box made a FIFO holds git at its read: bounded, and the check says NOT checked.
      timeout: 5_000,
    },
  );
}

/** A small file's bytes, never through a link and never waiting on a FIFO the box made there. */
function text(p: string): string {
  let fd: number;
  try {
    fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return "-";
  }
  try {
    if (!fstatSync(fd).isFile()) return "?";
    const buf = Buffer.alloc(4096);
    return buf.toString("latin1", 0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
}

function statKey(p: string): string {
  try {
    const st = lstatSync(p, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return "-";
  }
}

/** What, when unchanged, says the index and HEAD's commit are as they were (no git run for it). */
function stampOf(root: string): string {
  const g = path.join(root, ".git");
  const head = text(path.join(g, "HEAD"));
  const ref = /^ref: (refs\/\S+)/.exec(head)?.[1];
  return [
    statKey(path.join(g, "index")),
    head,
    ref ? text(path.join(g, ref)) : "",
    statKey(path.join(g, "packed-refs")),
  ].join("\n");
}

/** The root's repository as git holds it; undefined when the root has none git will read. */
function read(root: string, stamp: string): TreeBaseline {
  let ref: string | undefined;
  let commit: string | undefined;
  try {
    ref = git(root, ["symbolic-ref", "-q", "HEAD"]).trim() || undefined;
  } catch {
    ref = undefined; // detached (exit 1), or no repository: the next call says which
  }
  try {
    commit = git(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"]).trim() || undefined;
  } catch {
    commit = undefined; // an unborn branch
  }
  const entries = git(root, ["ls-files", "-s", "-z", "--", ...pathspecs(root)])
    .split("\0")
    .filter((e) => e !== "");
  return { stamp, ref, commit, entries };
}

/** The last baseline read for each root (three git runs), again while its stamp and paths are unchanged. */
const lastRead = new Map<string, { paths: string; tree: TreeBaseline }>();
const MAX_ROOTS = 16;

/** The baseline before a call; undefined when git cannot read the repository (nor can the user's git then). */
export function treeBaseline(root: string): TreeBaseline | undefined {
  const g = path.join(root, ".git");
  try {
    if (!lstatSync(g).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  try {
    const stamp = stampOf(root);
    const paths = pathspecs(root).join("\0");
    const hit = lastRead.get(root);
    const tree = hit?.paths === paths && hit.tree.stamp === stamp ? hit.tree : read(root, stamp);
    lastRead.delete(root);
    lastRead.set(root, { paths, tree });
    if (lastRead.size > MAX_ROOTS) lastRead.delete(lastRead.keys().next().value!);
    return { ...tree, entries: [...tree.entries] }; // a check moves its own copy on
  } catch {
    // git cannot read it now (a HEAD a call spoilt): the last state it could read, if any, is the one to keep.
    const hit = lastRead.get(root);
    return hit && { ...hit.tree, entries: [...hit.tree.entries] };
  }
}

/** The runs-later paths a tree change between two commits touches (from undefined: all of them in `to`). */
function touched(root: string, from: string | undefined, to: string): string[] {
  const out =
    from === undefined
      ? git(root, ["ls-tree", "-r", "-z", "--name-only", to, "--", ...pathspecs(root)])
      : git(root, [
          "diff-tree",
          "-r",
          "-z",
          "--no-renames",
          "--no-ext-diff",
          "--name-only",
          from,
          to,
          "--",
          ...pathspecs(root),
        ]);
  return out.split("\0").filter((p) => p !== "");
}

/**
 * Puts back what the call changed of git's record of the runs-later paths (see the top). `before`:
 * treeBaseline's, taken before the call; the result says what was put back, or could not be.
 */
export function checkTree(root: string, before: TreeBaseline): Undone[] {
  const stamp = stampOf(root);
  if (stamp === before.stamp) return [];
  const out: Undone[] = [];
  let now: TreeBaseline;
  try {
    now = read(root, stamp);
  } catch (err) {
    return [
      {
        path: ".git/index",
        what: `NOT checked (${firstLine(err)}): what git's index and HEAD hold of what runs later, which the user's git cannot read either until the repository is mended`,
      },
    ];
  }
  if (now.commit !== undefined && now.commit !== before.commit) {
    let changed: string[] = [];
    try {
      changed = touched(root, before.commit, now.commit);
    } catch (err) {
      out.push({
        path: ".git/HEAD",
        what: `NOT checked (${firstLine(err)}): the call's commits, against what runs later`,
      });
    }
    if (changed.length > 0) out.push(moveHeadBack(root, before, now, changed));
  }
  out.push(...restoreEntries(root, before.entries));
  // What is there now is what was, where it matters: the next check starts from it (no git run while
  // nothing changes), unless something here could not be put back.
  if (!out.some((u) => u.what.startsWith("NOT "))) {
    const back = out.some((u) => u.path === ".git/HEAD");
    before.stamp = stampOf(root);
    if (!back) {
      before.ref = now.ref;
      before.commit = now.commit;
    }
  }
  return out;
}

/** HEAD back to the commit (and branch) it was on; the call's commit kept on `latch/held-…`. */
function moveHeadBack(root: string, before: TreeBaseline, now: TreeBaseline, changed: string[]): Undone {
  const shown = changed
    .slice(0, 3)
    .map((p) => `\`${p}\``)
    .join(", ");
  const what = `the call's commit ${now.commit!.slice(0, 12)} changes ${shown}${changed.length > 3 ? ` and ${changed.length - 3} more` : ""}, which git or an editor runs later (the user's \`git reset --hard\` or \`git stash\` would write it)`;
  const held = `refs/heads/latch/held-${now.commit!.slice(0, 12)}`;
  try {
    git(root, ["update-ref", "-m", "latch: a commit that changes what runs later", held, now.commit!, ""]);
  } catch {
    // kept already (the same commit held before), or refused: the reflog still has it
  }
  try {
    if (before.ref !== undefined && now.ref !== before.ref) git(root, ["symbolic-ref", "HEAD", before.ref]);
    const target = before.ref ?? "HEAD";
    const current = git(root, ["rev-parse", "-q", "--verify", `${target}^{commit}`]).trim();
    if (before.commit === undefined) git(root, ["update-ref", "-d", target, current]);
    else
      git(root, [
        "update-ref",
        ...(before.ref === undefined ? ["--no-deref"] : []),
        "-m",
        "latch: back from a commit that changes what runs later",
        target,
        before.commit,
        current,
      ]);
    const where = before.commit === undefined ? "no commit (unborn)" : before.commit.slice(0, 12);
    return {
      path: ".git/HEAD",
      what: `moved back to ${where}${before.ref ? ` on ${before.ref.replace(/^refs\/heads\//, "")}` : ""}: ${what}; the commit is kept on \`${held.replace(/^refs\/heads\//, "")}\`, its other changes are staged`,
    };
  } catch (err) {
    return { path: ".git/HEAD", what: `NOT undone (${firstLine(err)}): ${what}` };
  }
}

/** The index entries of the runs-later paths as they were (`before`: `git ls-files -s` records). */
function restoreEntries(root: string, before: string[]): Undone[] {
  let now: string[];
  try {
    now = git(root, ["ls-files", "-s", "-z", "--", ...pathspecs(root)])
      .split("\0")
      .filter((e) => e !== "");
  } catch (err) {
    return [{ path: ".git/index", what: `NOT checked (${firstLine(err)}): git's index, against what runs later` }];
  }
  const byPath = (records: string[]) => {
    const m = new Map<string, string[]>();
    for (const r of records) {
      const p = r.slice(r.indexOf("\t") + 1);
      m.set(p, [...(m.get(p) ?? []), r]);
    }
    return m;
  };
  const was = byPath(before);
  const is = byPath(now);
  const changed = [...new Set([...was.keys(), ...is.keys()])].filter(
    (p) => (was.get(p) ?? []).join("\n") !== (is.get(p) ?? []).join("\n"),
  );
  if (changed.length === 0) return [];
  const zeros = "0".repeat((before[0] ?? now[0]).split(" ")[1].length);
  // Each path's entries removed (mode 0), then the ones it had put back, stages and all.
  const input = changed.flatMap((p) => [`0 ${zeros}\t${p}`, ...(was.get(p) ?? [])]).join("\0") + "\0";
  const what =
    "put back in git's index: the call staged its own version of a file git or an editor runs later (the user's `git checkout .` or `git restore` would write it)";
  try {
    git(root, ["update-index", "-z", "--index-info"], input);
    return changed.map((p) => ({ path: p, what }));
  } catch (err) {
    return changed.map((p) => ({ path: p, what: `NOT undone (${firstLine(err)}): ${what}` }));
  }
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return String(e.stderr || e.message || err)
    .split("\n")[0]
    .trim();
}
