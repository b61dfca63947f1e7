// The workspace's own secrets: every path inside the workspace that the credential quarantine covers
// (`.env`, `*.pem`, a `.ssh` folder, … see fs/quarantine.ts), found when a call's process starts,
// so the sandbox can mask each one (bwrap.ts) and the uncontained argument check can see which
// folders hold one (shell/arguments.ts). Also the nested repositories' `.git` folders and files, and
// the entries named as what runs later (RUNS_LATER: `.envrc`, `.vscode`, …) in every folder, which
// the control guard (guard.ts) watches in subfolders too.
//
// The walk runs before every contained spawn, so it must cost little: a folder's listing is kept
// and reused while the folder's inode and ctime are unchanged (a name added, removed or renamed in a
// folder changes its ctime, and so does a chmod, which mtime misses), so a warm walk is one lstat per
// folder. A listing read too soon after the folder's ctime is not trusted (src/fs/racy.ts: a change
// in the same tick, or the same second on a file system of whole seconds, would leave it equal).
//
// A name that is not valid UTF-8 (`\xff`) is held as names.ts holds one, and the walk goes below it
// like any other (every fs call takes osPath): a contained process can make such a folder, and in it
// an `.envrc` or a repository with `core.fsmonitor` that a walk by text would never see (Node reads
// the name as U+FFFD, a path that does not exist). `hasEscapedBytes` tells such a path.
import { accessSync, constants, lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { envelopeGlob } from "../fs/glob.js";
import { bytesToInternal, osPath } from "../fs/names.js";
import { configStamp } from "../fs/git-config.js";
import { GIT_DIR_MARKS, isFileMark, isGitDirLike, RUNS_LATER } from "../fs/protected.js";
import { quarantineGlob } from "../fs/quarantine.js";
import { racy } from "../fs/racy.js";
import { realpathOf } from "../fs/realpath.js";
import { beyondTheWalk, type ConfigNamed } from "./gitlinks.js";
import { followLinks, followState, LINKED_FOLDERS } from "./linked.js";
import { NOT_WALKED } from "./not-walked.js";

/** RUNS_LATER's names of one component (`.git/hooks` is the git folders' own check). */
const RUNS_LATER_NAMES: ReadonlySet<string> = new Set(RUNS_LATER.filter((n) => !n.includes("/")));

/** Workspaces whose listings are kept at once (each host has one; tests make many). */
const MAX_ROOTS = 8;

/** What the walk found at a path to mask: masks.ts mounts a folder, a file or what a link leads to. */
export type MaskKind = "dir" | "file" | "link";

export interface WorkspaceScan {
  /** Quarantined paths inside the workspace (files, folders, links named so or leading to one), absolute. */
  secrets: string[];
  /** Folders named `.git` below the root (nested repositories; the root's own is not listed). */
  gitDirs: string[];
  /** Files (or links) named `.git` below the root: `gitdir:` pointers of submodules and worktrees. */
  gitFiles: string[];
  /**
   * Folders (the root too) that git takes for a git directory under another name (HEAD beside objects
   * and refs, or commondir: fs/protected.ts): a bare repository, or one made to be found by git's
   * discovery in the user's next command there.
   */
  bareDirs: string[];
  /** Each folder holding any of GIT_DIR_MARKS, with those it holds: what made a folder a git directory. */
  gitMarks: ReadonlyMap<string, readonly string[]>;
  /** Indexes latch could not read for their gitlinks (a scan for the guard: its check goes on). */
  gitlinkErrors: string[];
  /** What repositories' configs name in the workspace that runs later (gitlinks.ts), when there. */
  configNamed: ConfigNamed[];
  /** Every folder the walk listed, with its inode: whether a folder is one that was there (guard.ts). */
  folders: ReadonlyMap<string, FolderSeen>;
  /** Entries named as a RUNS_LATER entry in any folder below the root (the root's own are not listed), absolute. */
  runsLater: string[];
  /** Paths the user's envelope closes to the calling tool (`denied` globs), outside the quarantine, absolute. */
  denied: string[];
  /**
   * Folders below the root the walk cannot look into (EACCES: no read, or no search, permission):
   * the box masks each whole, since a contained process of the same user can open it again with
   * chmod (the root itself unreadable is listed too, and nothing starts). What it holds is unknown.
   */
  unreadable: string[];
  /**
   * What each of secrets, denied and unreadable is, as the walk saw it (its listing's entry type): a
   * path the walk reached without passing a link is its own real path, so masking it needs no call a
   * background process's chmod could fail between the walk and the mounts (review h2).
   */
  maskKinds: ReadonlyMap<string, MaskKind>;
  /**
   * Folders whose path is too long to name (ENAMETOOLONG: past PATH_MAX, made by relative steps):
   * not entered, and no mount can name what is in them (bwrap.ts refuses to start while one exists).
   */
  tooLong: string[];
  /**
   * Links, as `PATH\0TARGET` (the target as written): every one in the walked folders (the guard's
   * baseline), and those no one path can follow for everyone (through `/proc`: linked.ts), which the
   * guard removes when new (link-guard.ts).
   */
  links: ReadonlySet<string>;
  linksUnfollowed: string[];
}

/** A walked folder as it was: by inode and birth time (a folder removed and made again may get its inode back). */
export interface FolderSeen {
  readonly ino: number;
  /** 0 where the file system keeps none. */
  readonly birthtimeMs: number;
  readonly entries: number;
}

interface Listing {
  ino: number;
  birthtimeMs: number;
  ctimeMs: number;
  readAt: number;
  dirs: string[];
  secrets: string[];
  gitDirs: string[];
  gitFiles: string[];
  /** Which of GIT_DIR_MARKS the folder holds. */
  marks: string[];
  /** How many entries it holds. */
  entries: number;
  runsLater: string[];
  denied: string[];
  /** The folder could not be listed (EACCES). */
  unreadable: boolean;
  /** What each masked entry of the listing (secrets, denied) is. */
  kinds: [string, MaskKind][];
  /** The links it holds (but `.git`): the absolute path and the target as written (linked.ts). */
  links: [string, string][];
  /** Its folders the walk does not enter (not-walked.ts), by name: entered below a link's target (linked.ts). */
  skipped: string[];
}

// A memo, not state that decides anything: each listing is checked against the disk before each use.
const listings = new Map<string, Map<string, Listing>>();

/** The envelope's globs, matched as the envelope reads them: the absolute path or the root-relative one. */
type Denied = { root: string; tests: ((s: string) => boolean)[] };

function read(dir: string, st: Stats, deny: Denied): Listing {
  const readAt = Date.now();
  const l: Listing = {
    ino: st.ino,
    birthtimeMs: st.birthtimeMs,
    ctimeMs: st.ctimeMs,
    readAt,
    dirs: [],
    secrets: [],
    gitDirs: [],
    gitFiles: [],
    marks: [],
    entries: 0,
    runsLater: [],
    denied: [],
    unreadable: false,
    kinds: [],
    links: [],
    skipped: [],
  };
  let entries;
  try {
    entries = readdirSync(osPath(dir), { withFileTypes: true });
    // Node reads a name that is not UTF-8 with U+FFFD in it: then the folder again, as bytes.
    if (entries.some((e) => e.name.includes("\uFFFD")))
      entries = readdirSync(osPath(dir), { withFileTypes: true, encoding: "buffer" });
  } catch (err) {
    // Gone since the lstat: nothing to find. Unreadable: read again each time, and masked whole until then.
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) return { ...l, readAt: -Infinity };
    if (errnoCode(err) === "EACCES") return { ...l, readAt: -Infinity, unreadable: true };
    throw err;
  }
  // Listed but not searchable (read without search permission): nothing below can be looked at, or
  // masked by name, until a chmod a process of the same user can make.
  try {
    accessSync(osPath(dir), constants.X_OK);
  } catch (err) {
    // Gone (or swapped) since the listing: its parent's listing is stale and read again next time.
    if (["ENOENT", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) return { ...l, readAt: -Infinity };
    if (errnoCode(err) !== "EACCES") throw err;
    return { ...l, readAt: -Infinity, unreadable: true };
  }
  const base = dir === "/" ? "" : dir;
  l.entries = entries.length;
  for (const e of entries) {
    const raw = e.name as string | Buffer; // @types/node 20 types a buffer Dirent's name as string
    // A name that is not UTF-8 as latch holds one (names.ts): every fs call below takes osPath of it.
    const name = typeof raw === "string" ? raw : bytesToInternal(raw);
    const abs = base + "/" + name;
    const isDir = e.isDirectory();
    if (RUNS_LATER_NAMES.has(name)) l.runsLater.push(abs);
    if (GIT_DIR_MARKS.includes(name) && !(isFileMark(name) && isDir)) l.marks.push(name);
    if (name === ".git") {
      (isDir ? l.gitDirs : l.gitFiles).push(abs);
      continue;
    }
    if (e.isSymbolicLink()) {
      const written = linkText(abs);
      if (written !== undefined) l.links.push([abs, written]);
    }
    if (quarantineGlob(abs) !== undefined || (e.isSymbolicLink() && leadsToSecret(abs))) l.secrets.push(abs);
    else if (deny.tests.length > 0 && deniedPath(abs, deny)) l.denied.push(abs);
    else {
      if (isDir) (NOT_WALKED.has(name) ? l.skipped : l.dirs).push(name);
      continue;
    }
    l.kinds.push([abs, e.isSymbolicLink() ? "link" : isDir ? "dir" : "file"]);
  }
  return l;
}

/** What the link `abs` says (as names.ts holds a name), or undefined when it is gone since the listing. */
function linkText(abs: string): string | undefined {
  try {
    return bytesToInternal(readlinkSync(osPath(abs), { encoding: "buffer" }));
  } catch {
    return undefined;
  }
}

/**
 * A link under an ordinary name (`config.txt -> ../.env`) whose target the quarantine covers. The OS's
 * realpath: Node's JS one circles forever on `f -> q/f`, `q -> sub/..`, which hung every call's scan.
 */
function leadsToSecret(link: string): boolean {
  try {
    return quarantineGlob(realpathOf(link)) !== undefined;
  } catch {
    return false; // leads nowhere: nothing to read
  }
}

/** The folder holding `p` (an absolute path held as names.ts holds one). */
function dirOf(p: string): string {
  const at = p.lastIndexOf("/");
  return at <= 0 ? "/" : p.slice(0, at);
}

function deniedPath(abs: string, deny: Denied): boolean {
  const rel = abs.slice(deny.root.length + 1);
  return deny.tests.some((t) => t(abs) || t(rel));
}

/**
 * The quarantined paths and nested `.git` entries under the canonical workspace root `root`, now; and
 * with `denied` (envelope globs: always_deny and deny_paths, policy/visibility.ts), the paths they close.
 * A folder found secret or denied is listed whole and not entered. `gitlinks` (the box, "strict", and
 * the guard, "lenient"): also the repositories the indexes' gitlinks lead to under node_modules, and
 * the git folders `.git` files name (gitlinks.ts); an index latch cannot read stops a start, and is
 * said in `gitlinkErrors` to the guard.
 */
/** What the last walk of each root found its repositories' configs name (beyondTheWalk's `named`), canonical, and the configs read. */
const lastNamed = new Map<string, { named: string[]; files: string[]; stamp: string }>();

/**
 * What the last walk of `root` (a contained call's) found every repository's config names inside it;
 * before any, a walk now: the file tools ask there too, beyond the repositories on the way to what
 * they write (review g10: a nested repository's `core.hooksPath = ../../tools/hooks`). Not a walk for
 * every write, which would cost each a look at every folder: a nested repository's config is the
 * user's (a new one's keys are dropped by the guard): the configs read are looked at again (a stat
 * each), and a walk made again when one changed; a new nested repository is seen at the next walk.
 */
export function lastConfigNamed(root: string): readonly string[] {
  const last = lastNamed.get(root);
  if (last !== undefined && configStamp(last.files) === last.stamp) return last.named;
  return scanWorkspace(root, [], "lenient").configNamed.map((n) => n.path);
}

export function scanWorkspace(
  root: string,
  denied: readonly string[] = [],
  gitlinks: "strict" | "lenient" | false = false,
): WorkspaceScan {
  const key = denied.length === 0 ? root : `${root}\0${denied.join("\0")}`;
  const deny: Denied = { root: root === "/" ? "" : root, tests: denied.map((g) => envelopeGlob(g)) };
  const before = listings.get(key);
  const now = new Map<string, Listing>();
  const out: WorkspaceScan = {
    secrets: [],
    gitDirs: [],
    gitFiles: [],
    bareDirs: [],
    gitMarks: new Map(),
    folders: new Map(),
    gitlinkErrors: [],
    configNamed: [],
    runsLater: [],
    denied: [],
    unreadable: [],
    maskKinds: new Map(),
    tooLong: [],
    links: new Set(),
    linksUnfollowed: [],
  };
  const unreadable = new Set<string>();
  const kinds = new Map<string, MaskKind>();
  const marks = new Map<string, readonly string[]>();
  // Each folder to list, and the link that led there (`PATH\0TARGET`; linked.ts: only what git and
  // RUNS_LATER need is taken from what it leads to, not secrets: the walk's known limits). Links are
  // followed once the workspace's own folders are listed, so the stack then holds only theirs.
  const stack: [string, string | undefined][] = [[root, undefined]];
  const links: (readonly [string, string])[] = [];
  const follow = followState(gitlinks === "strict");
  const allLinks = (out.links = new Set<string>());
  const linkErrors: string[] = [];
  for (;;) {
    while (stack.length > 0) {
      const [dir, via] = stack.pop()!;
      const viaLink = via !== undefined;
      if (viaLink && now.has(dir)) continue; // reached by two links
      if (viaLink && follow.budget && ++follow.folders > LINKED_FOLDERS) {
        const name = path.relative(root, via.slice(0, via.indexOf("\0")));
        linkErrors.push(
          `latch cannot check where the link \`${name}\` leads: the links of this workspace lead into more than ` +
            `${LINKED_FOLDERS} folders its walk does not enter. Remove the link, or run this command uncontained.`,
        );
        stack.length = 0;
        break;
      }
      let st: Stats;
      try {
        st = lstatSync(osPath(dir));
      } catch (err) {
        if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) continue; // gone since its parent was read
        // Its parent can be listed but not searched (or the root cannot be reached): that folder whole.
        if (errnoCode(err) === "EACCES") {
          unreadable.add(dir === root ? root : dirOf(dir));
          continue;
        }
        if (errnoCode(err) === "ENAMETOOLONG") {
          out.tooLong.push(dir);
          continue;
        }
        throw err;
      }
      if (!st.isDirectory()) continue; // replaced by a link or a file: its parent's listing is stale and re-read next time
      let l = before?.get(dir);
      if (!l || l.ino !== st.ino || l.ctimeMs !== st.ctimeMs || racy(l.readAt, l.ctimeMs)) l = read(dir, st, deny);
      now.set(dir, l);
      if (l.unreadable) unreadable.add(dir);
      if (!viaLink) {
        for (const [p, k] of l.kinds) kinds.set(p, k);
        for (const item of l.secrets) out.secrets.push(item);
        for (const item of l.denied) out.denied.push(item);
      }
      if (dir !== root) for (const item of l.gitDirs) out.gitDirs.push(item);
      if (dir !== root) for (const item of l.gitFiles) out.gitFiles.push(item);
      if (dir !== root) for (const item of l.runsLater) out.runsLater.push(item);
      if (l.marks.length > 0) {
        marks.set(dir, l.marks);
        if (isGitDirLike((n) => l.marks.includes(n))) out.bareDirs.push(dir);
      }
      for (const item of l.links) links.push(item);
      for (const [abs, written] of l.links) allLinks.add(`${abs}\0${written}`);
      const base = dir === "/" ? "" : dir;
      for (const d of l.dirs) stack.push([base + "/" + d, via]);
      // Named like a secret, or denied: entered here (not node_modules: a path through one is one by name).
      if (viaLink) for (const [p, k] of l.kinds) if (k === "dir") stack.push([p, via]);
    }
    // Where a link leads the user's `cd`, and their git from there (linked.ts): the guard's and the box's.
    if (!gitlinks || links.length === 0 || follow.folders > LINKED_FOLDERS) break;
    const found = followLinks(root, links.splice(0), now, follow);
    for (const item of found.dirs) out.gitDirs.push(item);
    for (const item of found.files) out.gitFiles.push(item);
    for (const u of found.unreadable) unreadable.add(u);
    for (const item of found.errors) linkErrors.push(item);
    for (const item of found.unfollowed) out.linksUnfollowed.push(item);
    for (const item of found.targets) stack.push(item);
    if (stack.length === 0) break;
  }
  if (linkErrors.length > 0 && gitlinks === "strict") throw new Error(linkErrors[0]);
  if (gitlinks) {
    // What git enters that the walk does not reach: gitlinks.ts.
    const beyond = beyondTheWalk(root, out.gitDirs, out.gitFiles, gitlinks === "strict");
    for (const item of beyond.dirs) out.gitDirs.push(item);
    for (const item of beyond.files) out.gitFiles.push(item);
    for (const u of beyond.unreadable) unreadable.add(u);
    out.configNamed = beyond.named;
    lastNamed.delete(root);
    lastNamed.set(root, {
      named: beyond.named.map((n) => n.path),
      files: beyond.configFiles,
      stamp: configStamp(beyond.configFiles),
    });
    if (lastNamed.size > MAX_ROOTS) lastNamed.delete(lastNamed.keys().next().value!);
    out.gitlinkErrors = [...linkErrors, ...beyond.errors];
  }
  out.unreadable = [...unreadable].sort();
  for (const u of out.unreadable) kinds.set(u, "dir");
  out.maskKinds = kinds;
  out.gitMarks = marks;
  out.folders = now;
  listings.delete(key);
  listings.set(key, now);
  if (listings.size > MAX_ROOTS) listings.delete(listings.keys().next().value!);
  return out;
}
