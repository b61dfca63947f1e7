// The repositories git enters where the sandbox's walk does not look. The walk (secrets.ts) skips
// node_modules and folders named `.git`, but a gitlink in an index (a submodule's entry, mode 160000)
// makes the user's next `git status` run `git status` in that folder, with that folder's own config
// (review g1: `git init node_modules/x` with core.fsmonitor and `git update-index --cacheinfo
// 160000,…,node_modules/x`, one contained call; the user's `git status` at the root ran the payload).
// So each index is read for its gitlinks (kept while its bytes are the same): the root's, each
// nested repository's and each submodule's (review g3), and each gitlinked folder the walk did not
// reach gives its `.git` to the walk's lists: kept read-only in the box, and undone by the guard when
// new. And what each config names that runs later: its hooks folder, the files it includes.
import { accessSync, closeSync, constants, fstatSync, lstatSync, openSync, readdirSync } from "node:fs";
import path from "node:path";
import { errnoCode, Refusal, ToolError } from "../errors.js";
import { lstatBeneath, openFolder } from "../fs/beneath.js";
import { bytesToInternal, osPath, showName } from "../fs/names.js";
import { isInside } from "../fs/paths.js";
import { realpathOf } from "../fs/realpath.js";
import {
  canonicalNamed,
  configValue,
  enclosingWorktree,
  namedByConfig,
  readText,
  rootGitDir,
} from "../fs/git-config.js";
import { parseIndex, UnreadableIndex, type IndexGitlinks } from "./git-index.js";
import { IndexBytes, IndexChanged, sameAs } from "./index-bytes.js";
import { gitFolders, gitNamesTooLong, looksLikeGitDir } from "./masks.js";

/** Each index's gitlinks (paths relative to its worktree, as names.ts holds them), while its bytes are the same. */
const parsed = new Map<string, Kept>();

/** What an index gives (its gitlinks, its sparse directories), and what was read for it. */
interface Kept extends IndexFound {
  read: Read;
  shared: Read[];
}

/**
 * An index's gitlinks and sparse directories (git-index.ts), paths relative to its worktree. `error`:
 * why latch could not read all of it (what it read before is still followed; such an answer is not kept).
 */
interface IndexFound {
  links: string[];
  sparse: string[];
  error?: Error;
}
const MAX_KEPT = 64;

/** What the indexes add to the walk's lists; `errors`: the indexes latch could not read (the guard goes on). */
export interface Linked {
  dirs: string[];
  files: string[];
  /** What repositories' configs name inside the workspace that runs later, when there. */
  named: ConfigNamed[];
  /** Every config file read (or looked for) to find `named`. */
  configFiles: string[];
  errors: string[];
  /** Folders a sparse directory's look could not list (EACCES): the walk's unreadable ones too. */
  unreadable: string[];
}

/** What the config of the git folder `gitDir` names that runs later: its `core.hooksPath` folder, or a file it includes. */
export interface ConfigNamed {
  path: string;
  gitDir: string;
}

/**
 * Gitlinks looked at, at most, in one strict walk (a box's start): each is an lstat of its `.git`, and
 * one call could make thousands of repositories share one index of 20,000 (review g5: 50 × 20,000 took
 * every later call 10–16 s). The guard's walk after a call has none (review g43: past it, the rest
 * went unread and an armed repository behind the last gitlink stayed): it pays for what the call made.
 */
const GITLINK_BUDGET = 50_000;

/**
 * A gitlink's path git may enter: no empty, `.` or `..` step. Any of them, not only those under
 * node_modules: the walk does not enter a folder named like a secret (`certs.key/`), one the envelope
 * denies or one it cannot read either (review g5), and one it did enter is already known.
 */
function enterable(rel: string): boolean {
  return !rel.split("/").some((s) => s === "" || s === "." || s === "..");
}

/**
 * What git may enter beyond the walk's lists, followed from the repositories the walk found
 * (`gitDirs`, folders named `.git` below the root; `gitFiles`, `.git` files): the root's and each
 * submodule's git folder (under `modules/`), the git folder each `.git` file names (its worktree is the
 * folder holding that file, whatever the folder's config says: review g4), and, through each one's
 * index, the `.git` of every gitlinked folder the walk did not reach; followed again from those. `strict` (a start): what latch cannot read is thrown; else (the guard, after a run) it
 * is said in `errors`, and the rest of the check goes on (review g2: one unreadable index switched
 * every undo off; review g4: a path too long to open did too).
 */
export function beyondTheWalk(
  root: string,
  gitDirs: readonly string[],
  gitFiles: readonly string[],
  strict: boolean,
): Linked {
  const out: Linked = { dirs: [], files: [], named: [], configFiles: [], errors: [], unreadable: [] };
  let budget = GITLINK_BUDGET;
  const failed = (err: unknown) => {
    if (strict) throw err;
    out.errors.push((err as Error).message);
  };
  const own = path.join(root, ".git");
  let ownKind: ReturnType<typeof statOrNot>;
  try {
    ownKind = statOrNot(own);
  } catch (err) {
    // The root not searchable (a call's `chmod 600 .`, review g45): nothing below it can be looked
    // at; the walk lists the root as unreadable, and the guard gives it back and walks again.
    failed(err);
    return out;
  }
  const seenDirs = new Set(gitDirs);
  const seenFiles = new Set(gitFiles);
  const files = [...(ownKind?.isFile() ? [own] : []), ...gitFiles];
  // (git folder, its worktree or undefined: its core.worktree), each pair read once.
  const queue: [string, string | undefined][] = [];
  for (const g of gitFolders(root, { gitDirs: [...gitDirs] }, false))
    queue.push([g, path.basename(g) === ".git" ? path.dirname(g) : undefined]);
  // The workspace a folder of a repository (a monorepo's package): what that repository's config names
  // inside the workspace runs at the user's git there too; its git folder is outside, read-only.
  if (ownKind === undefined) {
    const top = enclosingWorktree(root);
    const g = top === undefined ? undefined : rootGitDir(top);
    if (top !== undefined && g !== undefined) namedInside(g, top);
  }
  /** What the git folder `g`'s configs name inside the workspace, where it is, when there. */
  function namedInside(g: string, worktree: string): void {
    try {
      const found = namedByConfig(g, worktree, root);
      for (const item of found.files) out.configFiles.push(item);
      for (const p of found.named) {
        const real = canonicalNamed(p, root);
        if (real !== undefined && statOrNot(real)) out.named.push({ path: real, gitDir: g });
      }
    } catch (err) {
      failed(err);
    }
  }
  const done = new Set<string>();
  while (queue.length > 0 || files.length > 0) {
    const f = files.shift();
    if (f !== undefined) {
      try {
        const target = gitFileTarget(f, root);
        if (target === undefined) continue;
        // One outside the workspace (the root a linked worktree: review g8) is read-only in the box
        // and listed nowhere, but what its config names in the workspace is followed all the same.
        // One inside the root's git folder is listed too when git takes it for one, but for the root's
        // own and a linked worktree's (`worktrees/` is read-only whole): `git init --separate-git-dir
        // .git/repos/sub` made one nothing listed, its config writable in every box (review g28); and
        // `.git/modules` named so kept the user's submodules' git folders `config` and `hooks`
        // read-only, and the guard took them for its control files (review g29).
        const inOwn = isInside(own, target);
        if (
          isInside(root, target) &&
          target !== own &&
          !isInside(path.join(own, "worktrees"), target) &&
          (!inOwn || looksLikeGitDir(target)) &&
          !seenDirs.has(target) &&
          statOrNot(target)?.isDirectory()
        ) {
          seenDirs.add(target);
          out.dirs.push(target);
        }
        queue.push([target, path.dirname(f)]);
      } catch (err) {
        failed(err);
      }
      continue;
    }
    const [g, given] = queue.shift()!;
    if (done.has(`${g}\0${given}`)) continue;
    done.add(`${g}\0${given}`);
    let links: string[] = [];
    let worktree: string | undefined;
    try {
      if (gitNamesTooLong(g)) continue; // not read by name: it stops the start, and is set aside when new (guard.ts)
      if (!searchable(g)) continue; // a shut git folder stops the start on its own, with its own message (bwrap.ts)
      worktree = given ?? worktreeOf(g);
      if (worktree === undefined || !isInside(root, worktree)) continue;
    } catch (err) {
      failed(err);
      continue;
    }
    // What the config names that runs later (fs/git-config.ts): its hooks folder (review g5) and the
    // files it includes (their keys are the config's: review g6). Listed when there, as the walk lists
    // what runs later: kept read-only, and undone when new. Where each really is (review g8: a link on
    // the way, the user's `.githooks -> scripts/hooks` or one the model made, hid it). Apart from the
    // gitlinks below: a config that could not be read must not hide them (review g9).
    namedInside(g, worktree);
    try {
      const found = gitlinks(g);
      links = found.links.slice(); // the kept answer is not added to
      // A sparse directory's gitlinks are in its tree object: every repository in that folder is one.
      for (const dir of found.sparse)
        for (const rel of reposBelow(root, worktree, dir, out.unreadable)) links.push(rel);
      if (found.error !== undefined) failed(found.error); // said; what it did read is followed below
    } catch (err) {
      failed(err);
      if (links.length === 0) continue;
    }
    if (strict && (budget -= links.length) < 0) {
      failed(
        new Error(
          `latch cannot follow every submodule of this workspace: its indexes hold more than ${GITLINK_BUDGET} ` +
            `gitlinks, each a repository git may enter. Remove the repositories made under node_modules or site-packages, or run ` +
            `this command uncontained.`,
        ),
      );
      break;
    }
    for (const rel of links) {
      if (!enterable(rel)) continue;
      const dotGit = path.join(worktree, rel, ".git");
      let st;
      try {
        st = lstatInside(root, dotGit, out.unreadable);
      } catch (err) {
        failed(err);
        continue;
      }
      if (st?.isDirectory() && !seenDirs.has(dotGit)) {
        seenDirs.add(dotGit);
        out.dirs.push(dotGit);
        for (const m of gitFolders(root, { gitDirs: [dotGit] }, false))
          if (m !== own) queue.push([m, path.basename(m) === ".git" ? path.dirname(m) : undefined]);
      } else if (st && !st.isDirectory() && !seenFiles.has(dotGit)) {
        seenFiles.add(dotGit);
        out.files.push(dotGit);
        files.push(dotGit);
      }
    }
  }
  return out;
}

/**
 * The folders of `worktree` that hold a `.git` and whose path starts with the sparse directory entry's
 * name `name` (relative to `worktree`). git joins the name and its tree's paths as strings
 * (ensure_full_index), so `node_modules/a` gives `node_modules/ab`, `` gives anything (review g54):
 * every folder on a matching path is listed, from the worktree down. Each is opened through
 * descriptors from the root (fs/beneath.ts): a link on the way, which git does not enter a gitlink
 * through either, is not followed, even one a process beside latch swaps in. Looked at each time: the
 * folders are not the index. One latch cannot list goes to `shut`: the guard gives it back and looks
 * again (git needs only search permission there).
 */
function reposBelow(root: string, worktree: string, name: string, shut: string[]): string[] {
  const found: string[] = [];
  const base = path.relative(root, worktree);
  const relevant = (rel: string) => rel.startsWith(name) || name.startsWith(`${rel}/`);
  const stack = [""];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let entries;
    try {
      const dir = openFolder(root, [base, rel].filter((p) => p !== "").join("/") || ".", { doing: "reading" });
      try {
        entries = readdirSync(dir.self(), { withFileTypes: true, encoding: "buffer" });
      } finally {
        dir.close();
      }
    } catch (err) {
      if (err instanceof Refusal || err instanceof ToolError) continue; // a link on the way now, or gone
      const code = errnoCode(err) ?? "";
      if (["ENOENT", "ENOTDIR"].includes(code)) continue;
      if (code !== "EACCES") throw err;
      shut.push(path.join(worktree, rel)); // its parent was listed: this one is shut
      continue;
    }
    for (const e of entries) {
      const entry = bytesToInternal(e.name);
      const below = rel === "" ? entry : `${rel}/${entry}`;
      if (entry === ".git") {
        if (rel !== "" && rel.startsWith(name) && rel.length > name.length) found.push(rel);
      } else if (e.isDirectory() && relevant(below)) stack.push(below);
    }
  }
  return found;
}

/**
 * lstat of `p` (inside `root`) through descriptors from the root (fs/beneath.ts), or undefined where
 * nothing is or a link is on the way: git enters no gitlink through one, and by name a link, or one a
 * process beside latch swaps in, led latch to a repository outside the workspace, which the guard then
 * took for one it must undo. A folder on the way latch cannot open (EACCES) goes to `shut`, as the
 * walk's unreadable ones: git needs only search permission to enter it (review g56: `chmod 111
 * node_modules/x` left its repository's core.fsmonitor armed), so the guard gives it back and looks again.
 */
function lstatInside(root: string, p: string, shut: string[]) {
  try {
    return lstatBeneath({ abs: p, rel: path.relative(root, p) });
  } catch (err) {
    if (err instanceof Refusal || err instanceof ToolError) return undefined;
    const code = errnoCode(err) ?? "";
    if (["ENOTDIR", "ENAMETOOLONG", "ELOOP"].includes(code)) return undefined;
    const at = code === "EACCES" ? firstShut(root, path.relative(root, path.dirname(p))) : undefined;
    if (at === undefined) throw err;
    shut.push(at);
    return undefined;
  }
}

/** The first folder on the way to `rel` (from the root, not the root) that latch cannot open, if any. */
function firstShut(root: string, rel: string): string | undefined {
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const here = parts.slice(0, i).join("/");
    try {
      openFolder(root, here, { doing: "reading" }).close();
    } catch (err) {
      if (errnoCode(err) === "EACCES") return path.join(root, here);
      return undefined; // gone, or a link now: nothing git enters
    }
  }
  return undefined;
}

/** lstat, or undefined where nothing is (or nothing git could open: a path too long, a loop). */
function statOrNot(p: string) {
  try {
    return lstatSync(osPath(p), { throwIfNoEntry: false });
  } catch (err) {
    if (["ENOTDIR", "ENAMETOOLONG", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
}

/**
 * The folder a git folder's index paths are relative to when no `.git` file names it: a submodule's
 * `core.worktree` (`.git/modules/m` says `../../../m`); undefined for a bare one.
 */
function worktreeOf(g: string): string | undefined {
  const text = readText(path.join(g, "config"));
  const set = text === undefined ? undefined : configValue(text, "core", "worktree");
  return set === null || set === undefined ? undefined : path.resolve(g, set); // null: git refuses that config too
}

/**
 * The git folder a `.git` file names (`gitdir: …`, relative to its folder, read as git reads it),
 * where it really is (a link followed), wherever that is but the root itself; git uses that folder's
 * config and hooks there. A submodule checkout moved elsewhere (into node_modules) names another folder than
 * before, one the model can make (review g2), or a link to one (review g3).
 */
function gitFileTarget(file: string, root: string): string | undefined {
  const text = readText(file, true);
  if (text === undefined || !text.startsWith("gitdir: ")) return undefined;
  const named = text.slice("gitdir: ".length).replace(/[\r\n]+$/, "");
  let target: string;
  try {
    target = realpathOf(path.resolve(path.dirname(file), named));
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"].includes(errnoCode(err) ?? "")) return undefined; // nothing git can use
    throw err;
  }
  return target !== root ? target : undefined;
}

/** The gitlinks of the git folder `g`'s index (and of its shared index, when split), or none when it has no index. */
function gitlinks(g: string): IndexFound {
  try {
    return indexGitlinks(g);
  } catch (err) {
    const code = errnoCode(err);
    if (code === undefined) throw err; // parseIndex's own message
    const fix = code === "EACCES" ? "Give its owner read permission (chmod u+r), then run" : "Run";
    throw new Error(
      `latch cannot read the git index of \`${showName(g)}\` for its submodules (${code}), so it cannot keep ` +
        `them read-only. ${fix} the command again.`,
      { cause: err },
    );
  }
}

/** Whether latch may look in the git folder `g` (EACCES: shut; gone since the walk: nothing to read). */
function searchable(g: string): boolean {
  try {
    accessSync(osPath(g), constants.R_OK | constants.X_OK);
    return true;
  } catch (err) {
    if (["EACCES", "ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) return false;
    throw err;
  }
}

/** What an index's parse read, and from which file: the same reads giving the same bytes give the same parse. */
interface Read {
  file: string;
  id: string;
  reads: number[];
  digest: string;
}

/** The file `fd` (opened as `file`) read through `parse`, and what it read. */
function readIndex<T>(file: string, fd: number, parse: (r: IndexBytes) => T): { read: Read; value: T } {
  const st = fstatSync(fd);
  const r = IndexBytes.ofFile(fd, st.size);
  const value = parse(r);
  return { read: { file, id: `${st.dev}:${st.ino}:${st.size}`, reads: r.reads, digest: r.digest() }, value };
}

/** Whether `read`'s file, opened again, holds what its parse read. */
function unchanged(read: Read, fd?: number): boolean {
  const own = fd ?? openIndex(read.file);
  if (own === undefined) return false;
  try {
    const st = fstatSync(own);
    return `${st.dev}:${st.ino}:${st.size}` === read.id && sameAs(own, read.reads, read.digest);
  } finally {
    if (fd === undefined) closeSync(own);
  }
}

function indexGitlinks(g: string): IndexFound {
  const file = path.join(g, "index");
  // Opened (through a link too, as git opens it), and known by what was opened: a key taken from the
  // link's own lstat kept a stale answer while the file it leads to was rewritten (review g2).
  const fd = openIndex(file);
  if (fd === undefined) return { links: [], sparse: [] };
  try {
    if (!fstatSync(fd).isFile()) return { links: [], sparse: [] };
    // Known by the bytes its parse read, not its times: a process that keeps the file mapped writes
    // through the mapping with no time changed (review g49: a background process's second write added
    // a gitlink, and every later check kept the first's answer). A split index's shared file so too:
    // git takes its trailer for its name and never hashes it, so it can change under an unchanged index
    // (review g50: a mode flipped to 160000 in place).
    const kept = parsed.get(file);
    if (kept !== undefined && unchanged(kept.read, fd) && kept.shared.every((s) => unchanged(s))) return kept;
    // One that changes while read is read again; one that keeps changing is not judged (the result says so).
    for (let tries = 1; ; tries++)
      try {
        const found = readWhole(g, file, fd);
        parsed.delete(file);
        if (found.error === undefined) parsed.set(file, found);
        if (parsed.size > MAX_KEPT) parsed.delete(parsed.keys().next().value!);
        return found;
      } catch (err) {
        if (!(err instanceof IndexChanged)) throw err;
        if (tries === 3)
          throw new Error(
            `latch cannot read the git index ${showName(file)}: it changed each of the ${tries} times latch read it, so ` +
              `latch cannot see the folders git enters as submodules. Stop what writes it, then run the command again.`,
            { cause: err },
          );
      }
  } finally {
    closeSync(fd);
  }
}

/** The index `file` of the git folder `g` (open as `fd`) and its shared files: their gitlinks, and what was read. */
function readWhole(g: string, file: string, fd: number): Kept {
  const {
    read,
    value: { readings, error },
  } = readIndex(file, fd, (r) => parseAs(r, file));
  let failed = error;
  const links = readings.flatMap(({ index }) => index.links.filter((l) => l !== ""));
  const sparse = readings.flatMap(({ index }) => index.sparse);
  const shared: Read[] = [];
  // A split index keeps most entries in a shared file: its gitlinks too (one the index replaced or
  // deleted is still kept read-only). An entry the index replaced has no name of its own (its name is
  // the shared one's, by position): a gitlink so, a shared file replaced by one, takes every name
  // below a folder the walks do not enter (not-walked.ts) the shared index holds (review g2). Each
  // reading's shared files, each read as that reading (review g51: git's reading may be either).
  for (const { hashLen, index } of readings)
    for (const name of index.shared) {
      const sharedFile = path.join(g, `sharedindex.${name}`);
      const sharedFd = openIndex(sharedFile);
      if (sharedFd === undefined) {
        shared.push({ file: sharedFile, id: "", reads: [], digest: "" }); // read again at the next check
        continue;
      }
      try {
        const found = readIndex(sharedFile, sharedFd, (r) => {
          try {
            return parseIndex(r, hashLen, file, index.links.includes(""));
          } catch (err) {
            if (!(err instanceof UnreadableIndex)) throw err;
            failed ??= err;
            return err.partial;
          }
        });
        shared.push(found.read);
        for (const item of [found.value.links, found.value.skipped].flat()) links.push(item);
        for (const item of found.value.sparse) sparse.push(item);
      } finally {
        closeSync(sharedFd);
      }
    }
  return { read, links: [...new Set(links)], sparse: [...new Set(sparse)], shared, error: failed };
}

function openIndex(file: string): number | undefined {
  try {
    return openSync(osPath(file), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err; // EACCES: not taken for "no index", which would leave its gitlinks unguarded
  }
}

/**
 * The index read with each object id's length, sha1's and sha256's: every reading that holds together
 * (one that does not is not git's), or the first reading's error when none does. Both, whatever the
 * config says: a config latch reads otherwise than git (review g3: a decoy section; g4: a line latch did
 * not follow) then cannot hide a gitlink, and a reading that holds adds only names to look at.
 */
function parseAs(
  b: IndexBytes,
  file: string,
): { readings: { hashLen: number; index: IndexGitlinks }[]; error?: Error } {
  let first: unknown;
  const found: { hashLen: number; index: IndexGitlinks }[] = [];
  const partial: { hashLen: number; index: IndexGitlinks }[] = [];
  for (const hashLen of [20, 32]) {
    try {
      found.push({ hashLen, index: parseIndex(b, hashLen, file) });
    } catch (err) {
      if (err instanceof IndexChanged) throw err;
      first ??= err;
      // What a reading gave before it failed is names to look at too.
      if (err instanceof UnreadableIndex) partial.push({ hashLen, index: err.partial });
    }
  }
  // None holds: what they read before they failed is followed, and the error said.
  if (found.length === 0) {
    if (partial.length === 0) throw first;
    return { readings: partial, error: first as Error };
  }
  return { readings: [...found, ...partial] };
}
