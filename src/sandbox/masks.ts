// What a contained process may not see or change, beyond the read-only root filesystem. The lists
// follow sandbox-runtime's mandatory denies (linux-sandbox-utils.ts: shell rc files, .gitconfig,
// .git/hooks, editor and agent config) and codex-rs linux-sandbox (`.git` stays read-only inside a
// writable root), narrowed so that `git add` and `git commit` still work in workspace-write mode.
import { accessSync, constants, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { RUNS_LATER } from "../fs/protected.js";
import { SECRET_PATHS } from "../fs/quarantine.js";
import type { MaskKind, WorkspaceScan } from "./secrets.js";
import { errnoCode } from "../errors.js";
import { bytesToInternal, osPath, showName } from "../fs/names.js";
import { realpathOf } from "../fs/realpath.js";
import { isInside } from "../fs/paths.js";

/**
 * Under the home folder, made unreadable (an empty tmpfs or /dev/null over them): the credential
 * stores of the one list (fs/quarantine.ts, which the file tools and the shell's argument check use
 * too), and latch's own config and state.
 */
const CREDENTIAL_STORES: readonly string[] = [...SECRET_PATHS, ".config/latch", ".local/state/latch"];

/**
 * In a git folder: what git runs or follows later, outside the sandbox. `modules/` is not here: each
 * submodule's git folder under it gets the same masks (gitFolders), and the rest stays writable, as
 * the root's does, so git works in a submodule too.
 */
export const GIT_DIR_READ_ONLY: readonly string[] = [
  "config",
  "config.worktree",
  "commondir",
  "hooks",
  "info",
  "worktrees",
  // Git's discovery from a folder inside this one looks for `.git` here before taking this folder for
  // the git directory (review g39: a repository made at `.git/.git`).
  ".git",
];

/**
 * Bytes a git folder's path must leave below PATH_MAX (4,096) for the names latch looks at in it by
 * name (`config`, `hooks/reference-transaction`, `rebase-merge/git-rebase-todo`). git reads them
 * relative to the folder, at any depth; latch's stat of one past PATH_MAX said nothing was there
 * (review g57: a new repository's `.git/config` at 4,096 bytes kept its core.fsmonitor, which the
 * user's `git status` ran). One with less room is refused at a box's start and set aside when new.
 */
const GIT_NAME_ROOM = 64;

/** Linux's PATH_MAX, with its terminating NUL: a path must be shorter to be named. */
const PATH_MAX = 4096;

/** Whether the git folder `g` leaves too little room below PATH_MAX for the names latch reads in it. */
export function gitNamesTooLong(g: string): boolean {
  return Buffer.byteLength(osPath(g)) + GIT_NAME_ROOM >= PATH_MAX;
}

/**
 * Whether `p` itself is past PATH_MAX: latch cannot name it, where git, entering its folder by a
 * relative chdir, reads it (review g58: a gitlinked folder of 4,091 bytes, its `.git` then 4,096).
 */
export function pastPathMax(p: string): boolean {
  return Buffer.byteLength(osPath(p)) >= PATH_MAX;
}

/**
 * Inside a writable workspace, relative to its root: kept read-only, because git, an editor or a shell
 * would later run what they hold outside the sandbox (hooks, `core.fsmonitor`, `gitdir:` pointers, rc
 * files, tasks): the root repository's control files, and what RUNS_LATER (fs/protected.ts) lists.
 */
export const WORKSPACE_READ_ONLY: readonly string[] = [
  ...new Set([...GIT_DIR_READ_ONLY.map((rel) => `.git/${rel}`), ...RUNS_LATER]),
];

/** Sockets of daemons that act for the user (docker is root on the host): hidden under /run. */
export const HIDDEN_RUNTIME: readonly string[] = ["/run", "/var/run"];

/** The environment a contained process starts with: only these names pass (plus LC_*), nothing else. */
const ENV_ALLOW: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "COLUMNS",
  "LINES",
  "NO_COLOR",
  "FORCE_COLOR",
  "CI",
  "NODE_ENV",
];

/** The allowlisted part of `env`; each sandbox adds what its own layout needs (TMPDIR, …). */
export function sandboxEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (ENV_ALLOW.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  return out;
}

export type Kind = "dir" | "file" | "other";

/** What is at `p` (following symlinks, as bwrap does for a mount's destination), or undefined when nothing is. */
export function kindOf(p: string): Kind | undefined {
  try {
    const st = statSync(osPath(p));
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return undefined; // absent or unreadable: nothing to mount over
  }
}

/** Submodules' git folders nest this deep under `modules/` at most (`modules/a/modules/b`, names with slashes). */
const MAX_MODULE_DEPTH = 8;

/**
 * The workspace's git folders that are real folders: the root's `.git`, each nested repository's (from
 * the walk), each folder git takes for one under another name (`bareDirs`), and every submodule's git
 * folder under their `modules/`.
 */
export function gitFolders(
  root: string,
  scan?: Pick<WorkspaceScan, "gitDirs"> & Partial<Pick<WorkspaceScan, "bareDirs">>,
  strict = true,
): string[] {
  const own = path.join(root, ".git");
  const out: string[] = [];
  for (const g of [own, ...(scan?.gitDirs ?? []), ...(scan?.bareDirs ?? [])]) {
    // One past PATH_MAX is listed unlooked at: a start refuses it (bwrap.ts), the guard sets it aside.
    if (pastPathMax(g)) {
      out.push(g);
      continue;
    }
    // A look that met EACCES (a folder above shut by a background process's chmod) was taken for
    // "absent": the box kept nothing of that repository read-only, the process opened the folder again
    // and wrote its hooks, and the guard took the repository for a new one (2026-12-06).
    let kind: Kind | undefined;
    try {
      kind = strictKind(g, false);
    } catch (err) {
      if (errnoCode(err) !== "EACCES") throw err;
      if (strict) throw shutOnTheWay(g, err);
      out.push(g); // the guard: listed, never taken for new
      continue;
    }
    if (kind !== "dir") continue;
    out.push(g);
    submoduleDirs(path.join(g, "modules"), 0, out, strict);
  }
  // A submodule's git folder is both under `modules/` and named by its checkout's `.git` file (gitlinks.ts).
  return [...new Set(out)];
}

/** The error that stops a start: `p` cannot be kept read-only, since a folder on its way may not be searched. */
function shutOnTheWay(p: string, cause: unknown): Error {
  return new Error(
    `latch cannot keep \`${showName(p)}\` read-only: a folder on its way may not be searched (permission ` +
      `denied). Give its owner read and search permission (chmod u+rx), then run the command again.`,
    { cause },
  );
}

/** Whether latch may look inside the folder `p` (EACCES: no; a folder gone since: nothing to keep). */
export function searchable(p: string): boolean {
  try {
    accessSync(osPath(p), constants.R_OK | constants.X_OK);
    return true;
  } catch (err) {
    if (errnoCode(err) === "EACCES") return false;
    if (errnoCode(err) !== undefined) return true; // gone, or not a folder: the mounts below meet it as it is
    throw err;
  }
}

/** Under a git folder's `modules/`: each submodule's git folder (it has a HEAD), and theirs under its `modules/`. */
function submoduleDirs(dir: string, depth: number, out: string[], strict: boolean): void {
  if (depth > MAX_MODULE_DEPTH || lstatKind(dir) !== "dir") return;
  let names: string[];
  // A folder latch may not look in (a process of the same user can chmod it back) is listed as a git
  // folder: bwrap.ts then starts nothing until it is searchable (review h3: a submodule's git folder
  // at 0000 was not listed, so its config and hooks were writable in the next call).
  if (!searchable(dir)) {
    out.push(dir);
    return;
  }
  try {
    names = readdirSync(osPath(dir), { encoding: "buffer" }).map((n) => bytesToInternal(n)); // any name (names.ts)
    for (const name of names) {
      const sub = path.join(dir, name);
      if (strictKind(sub, false) !== "dir") continue;
      if (!searchable(sub))
        out.push(sub); // shut: bwrap.ts starts nothing (review h3)
      else if (looksLikeGitDir(sub)) {
        out.push(sub);
        submoduleDirs(path.join(sub, "modules"), depth + 1, out, strict);
      } else submoduleDirs(sub, depth + 1, out, strict); // a name with slashes
    }
  } catch (err) {
    // Shut meanwhile (a mode flipped after the checks above): nothing starts (review h4); `strict`
    // false (the guard, after a run, which must not throw its result away): the folder is listed.
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return; // gone since
    if (code !== "EACCES") throw err;
    if (!strict) {
      out.push(dir);
      return;
    }
    throw new Error(
      `latch cannot keep the git folders under \`${showName(dir)}\` read-only: one may not be searched ` +
        `(permission denied). Give its owner read and search permission (chmod u+rx), then run the command again.`,
      { cause: err },
    );
  }
}

/**
 * Whether `p` is a git folder: it has a HEAD that is a file or a link (git takes `HEAD -> refs/heads/x`
 * whose target does not exist: review h3 made one so, and the folder's config and hooks went
 * unguarded), or `objects/` and `refs/` (a HEAD moved away for a call, put back later).
 */
export function looksLikeGitDir(p: string): boolean {
  const head = strictKind(path.join(p, "HEAD"), false);
  if (head !== undefined && head !== "dir") return true;
  return strictKind(path.join(p, "objects"), false) === "dir" && strictKind(path.join(p, "refs"), false) === "dir";
}

/**
 * What is at `p` (`follow`: through a link; else a link is "other"), or undefined when nothing is.
 * EACCES is thrown: a folder on the way was made unsearchable, and a caller that took it for "absent"
 * would leave unguarded what it could not see (a background process flips modes to make it so).
 */
function strictKind(p: string, follow: boolean): Kind | undefined {
  try {
    const st = follow
      ? statSync(osPath(p), { throwIfNoEntry: false })
      : lstatSync(osPath(p), { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch (err) {
    if (["ENOTDIR", "ENAMETOOLONG", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  }
}

/** strictKind through links, with EACCES said as what it stops: keeping `p` read-only. */
function presentKind(p: string): Kind | undefined {
  try {
    return strictKind(p, true);
  } catch (err) {
    if (errnoCode(err) !== "EACCES") throw err;
    throw shutOnTheWay(p, err);
  }
}

/**
 * Read-only over a writable workspace, mounted after each of gitFolders is bound on itself (so none
 * can be renamed, removed or replaced: EBUSY; git still writes objects, refs, the index and lock files
 * in it): the existing paths of WORKSPACE_READ_ONLY under `root`, a `.git` that is a file (a `gitdir:`
 * pointer) anywhere, and each other git folder's GIT_DIR_READ_ONLY.
 */
export function workspaceMasks(
  root: string,
  scan?: Pick<WorkspaceScan, "gitDirs" | "gitFiles" | "runsLater"> & Partial<Pick<WorkspaceScan, "configNamed">>,
  folders: readonly string[] = gitFolders(root, scan),
): string[] {
  const out: string[] = [];
  // presentKind, not kindOf: a `.git` file behind a folder a background process had just shut read as
  // absent, so it was writable in that call (rewritten in place, the user's next git there ran another
  // repository's hooks).
  if (presentKind(path.join(root, ".git")) === "file") out.push(path.join(root, ".git"));
  for (const rel of WORKSPACE_READ_ONLY) {
    const p = path.join(root, rel);
    if (presentKind(p) !== undefined) out.push(p);
  }
  for (const f of scan?.gitFiles ?? []) if (presentKind(f) === "file") out.push(f);
  // What runs later, in any folder below the root (.envrc, .vscode, .husky …): an existing one is
  // read-only like the root's; a new one is undone by the guard (guard.ts).
  // And what a repository's config names there: its hooks (`core.hooksPath = .githooks`), its includes.
  // A link there (the user's `sub/.envrc -> ../tools/envrc`) is read-only where it leads, as the root's
  // are (a mount follows it; review g21: its target was written through it), when that is a file or
  // folder of the workspace holding no git folder: a link of the model's to `..` would otherwise make
  // the workspace read-only. The link itself is the guard's to keep (held-links.ts).
  for (const p of [...(scan?.runsLater ?? []), ...(scan?.configNamed ?? []).map((h) => h.path)]) {
    const k = lstatKind(p);
    if (k === "file" || k === "dir" || (k === "other" && linkInWorkspace(root, p, folders))) out.push(p);
  }
  for (const g of folders) {
    if (g === path.join(root, ".git")) continue; // WORKSPACE_READ_ONLY has its entries
    for (const rel of GIT_DIR_READ_ONLY) if (presentKind(path.join(g, rel)) !== undefined) out.push(path.join(g, rel));
  }
  return out;
}

/** A link at `p` that leads to a file or folder in `root`, not the root and holding no git folder. */
function linkInWorkspace(root: string, p: string, gitFolders: readonly string[]): boolean {
  try {
    if (!lstatSync(osPath(p)).isSymbolicLink()) return false;
    const real = realpathOf(p);
    if (!isInside(root, real) || real === root) return false;
    return !gitFolders.some((g) => g === real || isInside(real, g));
  } catch {
    return false; // leads nowhere latch can follow: nothing to keep read-only there
  }
}

/** What is at `p` itself (a link is "other"), or undefined. */
function lstatKind(p: string): Kind | undefined {
  try {
    const st = lstatSync(osPath(p));
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return undefined;
  }
}

/** Paths the mounts of the sandbox never cover: its own fresh /proc, /dev and the kernel's /sys. */
const NOT_MASKABLE = ["/proc", "/dev", "/sys"];

/**
 * bwrap arguments that make each quarantined workspace path unreadable: an empty read-only tmpfs over
 * a folder, /dev/null over anything else. A link is masked where it leads (bwrap mounts follow links);
 * one that leads nowhere gives nothing to read. `shown` (git-view.ts): tracked files shown as zeros
 * instead, each file's own or one inside a masked folder (its mount point made in the tmpfs).
 *
 * `kinds` (the walk's, secrets.ts): a path it found without passing a link is masked as it was found,
 * with no call here: a background process flipping a folder's mode between the walk and now made a
 * realpath or stat fail with EACCES, the mask was dropped as "leads nowhere", and the file read back
 * once the mode was flipped again (review h2). A link still needs its realpath: a failure there but
 * "nothing at the end" stops the start, unless its target as written is outside the workspace or in a
 * folder masked whole (`unreadable`). A link to a folder outside the workspace, to the workspace, or
 * to (or over, or into) a git folder is not masked; nor is anything inside a folder masked whole.
 */
export function secretMounts(
  secrets: readonly string[],
  shown: ReadonlyMap<string, string> = new Map(),
  found: {
    root?: string;
    kinds?: ReadonlyMap<string, MaskKind>;
    unreadable?: readonly string[];
    gitFolders?: readonly string[];
  } = {},
): string[] {
  const { root, unreadable = [] } = found;
  const kinds: ReadonlyMap<string, MaskKind> = found.kinds ?? new Map();
  const planned = new Map<string, Kind>();
  for (const s of secrets) {
    const k = kinds.get(s);
    if (k === "dir" || k === "file") {
      planned.set(s, k);
      continue;
    }
    let real: string;
    let kind: Kind | undefined;
    try {
      real = realpathOf(s);
      kind = strictKind(real, true);
    } catch (err) {
      const code = errnoCode(err);
      if (code !== undefined && NOTHING_AT_THE_END.includes(code)) continue; // nothing to read
      // A folder latch may not enter where the box cannot chmod (outside the workspace, read-only
      // there), or one the walk masks whole: nothing the box can read either.
      if (code !== undefined && (outsideRoot(s, root) || intoUnreadable(s, unreadable))) continue;
      throw new Error(
        `latch cannot mask what \`${showName(s)}\` leads to (${code ?? String(err)}): a folder on its way ` +
          `may not be entered. Make it searchable, or remove the link, then run the command again.`,
        { cause: err },
      );
    }
    if (kind === undefined || NOT_MASKABLE.some((d) => real === d || real.startsWith(d + "/"))) continue;
    // A link to a folder outside the workspace (`/usr`), or to the workspace itself: a mask there would
    // hide what every process needs (review h3: one such link stopped every later call), and the box
    // reads outside the workspace anyway (the home's credential stores are masked on their own).
    if (kind === "dir" && root !== undefined && (real === root || !isInside(root, real))) continue;
    // Nor a link to a git folder, or to a folder holding or inside one: the box keeps git folders
    // writable for git, and its own mounts there (git-view's info) could not be made in a read-only tmpfs.
    if (kind === "dir" && (found.gitFolders ?? []).some((g) => isInside(g, real) || isInside(real, g))) continue;
    planned.set(real, kind);
  }
  // Inside a folder masked whole nothing needs a mount of its own, and none could be made there.
  const folders = [...planned].filter(([, k]) => k === "dir").map(([p]) => p);
  const out: string[] = [];
  for (const [real, kind] of planned) {
    if (folders.some((f) => real.startsWith(f + "/"))) continue;
    if (kind === "dir") {
      out.push("--tmpfs", real);
      for (const [file, zeros] of shown) if (file.startsWith(real + "/")) out.push("--ro-bind", zeros, file);
      out.push("--remount-ro", real);
    } else out.push("--ro-bind", shown.get(real) ?? "/dev/null", real);
  }
  return out;
}

/** A link's realpath failures that mean nothing is at its end to read. */
const NOTHING_AT_THE_END = ["ENOENT", "ELOOP", "ENOTDIR", "ENAMETOOLONG"];

/** Whether the link `s`'s target, as written, is outside `root` (undefined: not known to be). */
function outsideRoot(s: string, root: string | undefined): boolean {
  if (root === undefined) return false;
  const target = writtenTarget(s);
  return target !== undefined && !isInside(root, target);
}

/** Whether the link `s`'s own target (as written, from its folder) is inside one of `folders`. */
function intoUnreadable(s: string, folders: readonly string[]): boolean {
  const target = folders.length === 0 ? undefined : writtenTarget(s);
  return target !== undefined && folders.some((f) => target === f || target.startsWith(f + "/"));
}

/** The link `s`'s target as written, made absolute from its folder; undefined if it cannot be read. */
function writtenTarget(s: string): string | undefined {
  try {
    return path.resolve(path.dirname(s), readlinkSync(osPath(s), "utf8"));
  } catch (err) {
    if (errnoCode(err) === undefined) throw err;
    return undefined;
  }
}

export function credentialStores(home: string | undefined): string[] {
  if (!home || !path.isAbsolute(home)) return [];
  return CREDENTIAL_STORES.map((rel) => path.join(home, rel));
}
