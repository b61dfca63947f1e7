// The repositories git enters where the sandbox's walk does not look. The walk (secrets.ts) skips
// node_modules, but a gitlink in an index (a submodule's entry, mode 160000) makes the user's next
// `git status` run `git status` in that folder, with that folder's own config (review g1: `git init
// node_modules/x` with core.fsmonitor and `git update-index --cacheinfo 160000,…,node_modules/x`, one
// contained call; the user's `git status` at the root ran the payload). So each index is read for its
// gitlinks (kept while the index file is unchanged), and one under node_modules gives its `.git` to
// the walk's lists: kept read-only in the box, and undone by the guard when new.
import { accessSync, closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { bytesToInternal, osPath, showName } from "../fs/names.js";
import { isInside } from "../fs/paths.js";

const GITLINK = 0o160000;

/** Each index's gitlinks (paths relative to its worktree, as names.ts holds them), while its file is unchanged. */
const parsed = new Map<string, { key: string; links: string[] }>();
const MAX_KEPT = 64;

/** What the indexes add to the walk's lists; `errors`: the indexes latch could not read (the guard goes on). */
export interface Linked {
  dirs: string[];
  files: string[];
  errors: string[];
}

/**
 * The `.git` folders and files of gitlinked folders under node_modules, for the repositories whose git
 * folders are `gitDirs` (absolute; each one's worktree is the folder holding it). `strict` (a start):
 * an index latch cannot read is thrown; else (the guard, after a run) it is said in `errors`, and the
 * rest of the check goes on (review g2: one unreadable index in a new folder switched every undo off).
 */
export function skippedGitlinks(gitDirs: readonly string[], strict: boolean): Linked {
  const out: Linked = { dirs: [], files: [], errors: [] };
  for (const g of gitDirs) {
    const worktree = path.dirname(g);
    let links: string[];
    try {
      links = gitlinks(g);
    } catch (err) {
      if (strict) throw err;
      out.errors.push((err as Error).message);
      continue;
    }
    for (const rel of links) {
      if (!rel.split("/").includes("node_modules")) continue; // the walk finds the rest
      const dotGit = path.join(worktree, rel, ".git");
      const st = lstatSync(osPath(dotGit), { throwIfNoEntry: false });
      if (st === undefined) continue;
      (st.isDirectory() ? out.dirs : out.files).push(dotGit);
    }
  }
  return out;
}

/**
 * The git folder a `.git` file names (`gitdir: …`, relative to its folder), when it is inside `root`;
 * git uses that folder's config and hooks there. A submodule checkout moved elsewhere (into
 * node_modules) names another folder than before, one the model can make (review g2).
 */
export function gitFileTarget(file: string, root: string): string | undefined {
  let text: string;
  try {
    const fd = openSync(osPath(file), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (!fstatSync(fd).isFile()) return undefined;
      const b = Buffer.alloc(4096);
      text = b.toString("utf8", 0, readSync(fd, b, 0, b.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP", "EACCES"].includes(errnoCode(err) ?? "")) return undefined; // a link: git's own, not followed here
    throw err;
  }
  const named = /^gitdir: *(.+?)\r?$/m.exec(text)?.[1];
  if (named === undefined) return undefined;
  const target = path.resolve(path.dirname(file), named);
  return target !== root && isInside(root, target) ? target : undefined;
}

/** The gitlinks of the git folder `g`'s index (and of its shared index, when split), or none when it has no index. */
function gitlinks(g: string): string[] {
  try {
    return indexGitlinks(g);
  } catch (err) {
    if (errnoCode(err) === undefined) throw err; // parseIndex's own message
    throw new Error(
      `latch cannot read the git index of \`${showName(g)}\` for its submodules (${errnoCode(err)}), so it cannot keep ` +
        `them read-only. Give its owner read permission (chmod u+r), then run the command again.`,
      { cause: err },
    );
  }
}

function indexGitlinks(g: string): string[] {
  // A git folder latch may not search stops the start on its own, with its own message (bwrap.ts).
  try {
    accessSync(osPath(g), constants.X_OK);
  } catch (err) {
    if (["EACCES", "ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) return []; // shut, or gone since the walk
    throw err;
  }
  const file = path.join(g, "index");
  // Opened (through a link too, as git opens it), and known by what was opened: a key taken from the
  // link's own lstat kept a stale answer while the file it leads to was rewritten (review g2).
  const fd = openIndex(file);
  if (fd === undefined) return [];
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return [];
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    const kept = parsed.get(file);
    if (kept?.key === key) return kept.links;
    const index = parseIndex(readFileSync(fd), hashLength(g), file);
    const links = index.links.filter((l) => l !== "");
    // A split index (`git update-index --split-index`) keeps most entries in a shared file: its gitlinks
    // too (one the index replaced or deleted is still kept read-only). An entry the index replaced has
    // no name of its own (its name is the shared one's, by position): a gitlink so, a shared file
    // replaced by one, takes every name under node_modules the shared index holds (review g2).
    if (index.shared !== undefined) {
      const sharedFd = openIndex(path.join(g, `sharedindex.${index.shared}`));
      if (sharedFd !== undefined) {
        try {
          const shared = parseIndex(readFileSync(sharedFd), hashLength(g), file);
          links.push(...shared.links);
          if (index.links.includes("")) links.push(...shared.skipped);
        } finally {
          closeSync(sharedFd);
        }
      }
    }
    parsed.delete(file);
    parsed.set(file, { key, links });
    if (parsed.size > MAX_KEPT) parsed.delete(parsed.keys().next().value!);
    return links;
  } finally {
    closeSync(fd);
  }
}

function openIndex(file: string): number | undefined {
  try {
    return openSync(osPath(file), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (["ENOENT", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) return undefined;
    throw err; // EACCES: not taken for "no index", which would leave its gitlinks unguarded
  }
}

/** The object id's length in the index: 32 bytes in a sha256 repository, else 20. */
function hashLength(g: string): number {
  let config: string;
  try {
    config = readFileSync(osPath(path.join(g, "config")), "utf8");
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) return 20; // no config: git's default
    throw err;
  }
  return /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20;
}

/**
 * The gitlinks of an index file (git's Documentation/gitformat-index.txt, versions 2 to 4), and the
 * shared index's name when the index is split. An index latch cannot read is an error that names it:
 * taken for one with no gitlinks, it would leave one unguarded.
 */
export function parseIndex(
  b: Buffer,
  hashLen: number,
  name: string,
): { links: string[]; skipped: string[]; shared?: string } {
  const bad = (why: string) =>
    new Error(
      `latch cannot read the git index ${showName(name)} (${why}), so it cannot see the folders git enters as ` +
        `submodules; git cannot read it either. If the repository is yours, move the index aside and rebuild it ` +
        `(\`git reset\` there).`,
    );
  if (b.length < 12 || b.toString("latin1", 0, 4) !== "DIRC") throw bad("no DIRC signature");
  const version = b.readUInt32BE(4);
  if (version < 2 || version > 4) throw bad(`version ${version}`);
  const count = b.readUInt32BE(8);
  const links: string[] = [];
  const skipped: string[] = []; // every name under a node_modules folder, whatever its mode
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const fixed = 40 + hashLen + 2;
    if (at + fixed > b.length) throw bad("cut short");
    const mode = b.readUInt32BE(at + 24);
    const flags = b.readUInt16BE(at + 40 + hashLen);
    const extended = version >= 3 && (flags & 0x4000) !== 0;
    const start = at + fixed + (extended ? 2 : 0);
    let name: Buffer;
    if (version === 4) {
      // The name: how many bytes of the previous one to drop (git's varint), then the rest, NUL-ended.
      let p = start;
      let c = b[p++];
      let drop = c & 127;
      while (c & 128) {
        c = b[p++];
        drop = (drop + 1) * 128 + (c & 127);
      }
      const end = b.indexOf(0, p);
      if (end < 0 || drop > previous.length) throw bad("a name cut short");
      name = Buffer.concat([previous.subarray(0, previous.length - drop), b.subarray(p, end)]);
      at = end + 1;
    } else {
      const end = b.indexOf(0, start);
      if (end < 0) throw bad("a name cut short");
      name = b.subarray(start, end);
      at = at + ((fixed + (extended ? 2 : 0) + name.length + 8) & ~7);
    }
    previous = name;
    if ((mode & 0o170000) === GITLINK) links.push(bytesToInternal(name));
    if (name.includes("node_modules")) skipped.push(bytesToInternal(name));
  }
  return { links, skipped, shared: sharedIndex(b, at, hashLen) };
}

/** The `link` extension's shared index name (hex), after the entries; undefined when the index is not split. */
function sharedIndex(b: Buffer, at: number, hashLen: number): string | undefined {
  while (at + 8 <= b.length - hashLen) {
    const sig = b.toString("latin1", at, at + 4);
    const size = b.readUInt32BE(at + 4);
    if (sig === "link") return b.toString("hex", at + 8, at + 8 + hashLen);
    at += 8 + size;
  }
  return undefined;
}
