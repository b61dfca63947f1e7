// The one path resolver every tool uses. The pure checks (containment, denied substrings) are kept
// apart from `resolvePath`, which touches the disk to follow symlinks.
// The disk calls are synchronous on purpose: each is a few µs on a local disk, while a trip through
// libuv's thread pool costs 60–80 µs here, and a read makes several (bench/RESULTS.md, "mcp").
import { lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { fromOsPath, osPath, parseShown, showName } from "./names.js";
import { realpathOf } from "./realpath.js";

export interface PathPolicy {
  /** The workspace root, already canonical (its own realpath). */
  root: string;
  /** Canonical paths of latch's own files (config, state dir, policy logs, policy programs, skill folders): refused to every tool. */
  controlPlane: string[];
  /** Substrings of the root-relative slash path that are refused. */
  deniedSubstrings: string[];
  /** The other roots served beside `root` (every MCP root the client offers), canonical: a path there is an OtherRoot. */
  otherRoots?: readonly string[];
}

export interface ResolvedPath {
  /** What the caller asked for. */
  input: string;
  /**
   * Canonical absolute path: every existing symlink followed. A name byte that is not valid UTF-8 is
   * held as an escaped byte (src/fs/names.ts): hand it to fs through `osPath`.
   */
  abs: string;
  /** Root-relative path with forward slashes; "." for the root itself. */
  rel: string;
  exists: boolean;
}

/** Pure: is `candidate` the root or below it, compared by whole path segments (never by string prefix). */
export function isInside(root: string, candidate: string): boolean {
  // Two clean absolute paths (no empty, "." or ".." segment, no trailing slash) compare as strings,
  // segment-wise; this runs for every found entry of a search, where path.relative showed in profiles.
  if (isCleanAbsolute(root) && isCleanAbsolute(candidate)) return insideClean(root, candidate);
  const rel = path.relative(root, candidate);
  if (rel === "") return true;
  if (path.isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(".." + path.sep);
}

/** isInside for two clean absolute paths (isCleanAbsolute): a string comparison, segment-wise. */
function insideClean(root: string, candidate: string): boolean {
  return candidate === root || (candidate.startsWith(root) && candidate.charCodeAt(root.length) === SLASH);
}

const SLASH = 47;
const UNCLEAN_SEGMENT = /\/\.{0,2}(?:\/|$)/;

/** Pure: an absolute POSIX path with no empty, "." or ".." segment and no trailing slash ("/" itself is not). */
export function isCleanAbsolute(p: string): boolean {
  return path.sep === "/" && p.charCodeAt(0) === SLASH && !UNCLEAN_SEGMENT.test(p);
}

/** Pure: the root-relative slash path of a path known to be inside the root. */
export function toRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

/** Pure: the first denied substring that the slash path contains (a folder also matches as `rel/`). */
export function deniedSubstring(rel: string, denied: readonly string[], isDir = false): string | undefined {
  const forms = isDir || rel === "." ? [rel, rel + "/"] : [rel];
  return denied.find((d) => d !== "" && forms.some((f) => f.includes(d)));
}

/** Pure: whether `abs` is one of the control-plane paths or below one. */
export function inControlPlane(abs: string, controlPlane: readonly string[]): boolean {
  // The candidate is tested for `.`/`..` segments once, not once per control-plane path: this runs
  // for every entry a walk meets (isInside's test was a tenth of find_files's CPU on 9,000 names).
  const clean = isCleanAbsolute(abs);
  return controlPlane.some((c) => (clean && isCleanAbsolute(c) ? insideClean(c, abs) : isInside(c, abs)));
}

const MAX_LINK_HOPS = 40;

/**
 * The realpath of `p`; for a path that does not exist yet, where the OS would create it: the realpath
 * of its nearest existing ancestor, then the names below it walked one at a time as the kernel walks
 * them. Only ENOENT falls back to that walk; any other error (ELOOP, EACCES, ENOTDIR) is thrown.
 * `below`: a canonical folder (the workspace root) that `p` is named under, whose names are walked by
 * hand wherever the kernel's answer is not the path as named (readBack).
 */
export async function canonicalize(p: string, below?: string): Promise<string> {
  return canonicalPath(p, below);
}

/**
 * Where `rel` below the real folder `root` leads, each link followed by hand as the kernel would; but
 * once the walk, after a link, arrives where `stopAt` picks, the first link it followed is the answer
 * (git-config.ts: through `/proc/self/…` a path leads elsewhere for each process that follows it; the
 * place reached, not the link's text, however it is spelled: review g10). ELOOP, ENOTDIR as canonicalize.
 */
export function walkBelow(root: string, rel: string, stopAt: (at: string) => boolean): string {
  return walkDown(root, rel.split("/").reverse(), stopAt);
}

/**
 * realpathOf(p), unless `p` lies under `below` and the answer is not `p` itself: then the names below
 * `below` walked by hand (walkDown). realpathOf reads back the name of the file it opened, which is
 * where that file is when it reads, not where it was opened: a process exchanging two names of the
 * workspace in between (renameat2 RENAME_EXCHANGE) made a path resolve to the other name, and the
 * call act on a file it did not name (move_file moved the other file). An answer that differs names a
 * link on the way, or such an exchange; the walk follows the links and takes every other name as named.
 */
function readBack(p: string, below: string | undefined): string {
  const real = realpathOf(p);
  if (real === p || below === undefined || !isInside(below, p)) return real;
  const walked = walkDown(below, toRel(below, p).split("/").reverse());
  // One name in two spellings (a case-insensitive or normalising file system, macOS's): the kernel's,
  // as before. Two names that differ only so, exchanged on a file system that tells them apart, are
  // the one exchange this does not see (see docs/security.md, Known limits).
  return walked !== real && spelledAlike(walked, real) ? real : walked;
}

const spelledAlike = (a: string, b: string) => a.normalize("NFC").toLowerCase() === b.normalize("NFC").toLowerCase();

/** canonicalize, for a caller that cannot wait. */
function canonicalPath(p: string, below?: string): string {
  try {
    return readBack(p, below);
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  // The names below the nearest ancestor that exists, nearest last (a stack).
  const rest: string[] = [];
  let at = p;
  for (;;) {
    const parent = path.dirname(at);
    if (parent === at) break;
    rest.push(path.basename(at));
    at = parent;
    // lstat first, the kernel's own walk: realpath(3) chases every link of the prefix again at each
    // ancestor (glibc reads each link once per prefix), so a dangling chain above a path of many
    // missing names was chased once per name. Only an ancestor that is there and no link is realpath'd;
    // a link is left to walkDown, which follows it from its real parent.
    const st = lstatSync(osPath(at), { throwIfNoEntry: false });
    if (st === undefined || st.isSymbolicLink()) continue;
    try {
      at = readBack(at, below);
      break;
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err; // changed since the lstat: climb on
    }
  }
  return walkDown(at, rest);
}

/**
 * From the real folder `at`, the names of `rest` (a stack) as the kernel takes them: `..` is the parent
 * of where the walk really is (never a name taken back on paper: with `f -> q/f`, `q -> sub/..`,
 * path.resolve led `f` back to itself, inside the root, where the OS goes elsewhere), a link's target
 * goes in front of what is left, and at most MAX_LINK_HOPS links for the whole path (counted per link
 * followed, as the kernel counts: a count per nesting let `..` make the walk exponential).
 */
function walkDown(at: string, rest: string[], stopAt?: (at: string) => boolean): string {
  let links = 0;
  let firstLink: string | undefined;
  while (rest.length > 0) {
    const name = rest.pop()!;
    if (name === "" || name === ".") continue;
    if (name === "..") {
      at = path.dirname(at);
      if (firstLink !== undefined && stopAt?.(at)) return firstLink;
      continue;
    }
    const next = path.join(at, name);
    const st = lstatSync(osPath(next), { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) {
      if (++links > MAX_LINK_HOPS)
        throw Object.assign(new Error(`too many symbolic links at ${next}`), { code: "ELOOP" });
      let target: string;
      try {
        target = fromOsPath(readlinkSync(osPath(next), { encoding: "buffer" }));
      } catch (err) {
        // Swapped between the lstat and here (no longer a link, or gone): look at the name again.
        const code = errnoCode(err);
        if (code !== "EINVAL" && code !== "ENOENT") throw err;
        rest.push(name);
        continue;
      }
      firstLink ??= next;
      const names = target.split("/");
      for (let i = names.length - 1; i >= 0; i--) rest.push(names[i]);
      if (target.startsWith("/")) at = "/";
      continue;
    }
    // Anything after a file is refused, `f/`, `f/.` and `f/..` too, as the kernel refuses them.
    if (st && !st.isDirectory() && rest.length > 0)
      throw Object.assign(new Error(`not a folder: ${next}`), { code: "ENOTDIR" });
    at = next;
    if (firstLink !== undefined && stopAt?.(at)) return firstLink;
  }
  return at;
}

export interface ResolveOptions {
  /** Mutations refuse a final symlink. */
  forWrite?: boolean;
}

/** Resolve a tool's path argument inside the workspace, or refuse with a reason the model can act on. */
export async function resolvePath(policy: PathPolicy, input: string, opts: ResolveOptions = {}): Promise<ResolvedPath> {
  if (typeof input !== "string" || input === "") {
    throw new Refusal("The path is empty.", "Pass a path relative to the workspace root, such as `src/index.ts`.");
  }
  if (input.includes("\0")) {
    throw new Refusal(
      "The path contains a NUL byte, which no file name can hold.",
      "Pass the path without the NUL byte.",
    );
  }
  const name = readName(policy.root, input);
  // Messages name the path as latch shows it (the input itself, unless it held control characters).
  const shown = showName(name);
  const lexical = path.resolve(policy.root, name);
  // Only the canonical path decides containment (an absolute path may reach the root through a link
  // to it); the lexical form is checked too so `a/../node_modules` is denied before touching the disk.
  if (isInside(policy.root, lexical)) checkDenied(policy, shown, toRel(policy.root, lexical));

  let abs: string;
  try {
    abs = await canonicalize(lexical, policy.root);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ELOOP")
      throw new Refusal(`\`${shown}\` goes through a loop of symbolic links.`, "Use a path without the looping link.");
    if (code === "ENOTDIR")
      throw new ToolError(
        "ENOTDIR",
        `\`${shown}\` passes through something that is not a folder. Check the path with list_dir.`,
      );
    if (code === "EACCES") throw new ToolError("EACCES", `Permission denied while resolving \`${shown}\`.`);
    throw err;
  }
  if (!isInside(policy.root, abs)) {
    const other = policy.otherRoots?.find((r) => isInside(r, abs));
    if (other !== undefined) throw new OtherRoot(other, shown, policy.root);
    throw outside(shown, abs, policy.root, policy.otherRoots);
  }
  const rel = toRel(policy.root, abs);
  checkDenied(policy, shown, rel);

  const st = lstatSync(osPath(abs), { throwIfNoEntry: false });
  const exists = st !== undefined;
  const isDir = st?.isDirectory() ?? false;
  const isLink = st?.isSymbolicLink() ?? false;
  if (isDir) checkDenied(policy, shown, rel, true);

  // Where the canonical path is the lexical one and no link, the requested name is that path, not a
  // link: two realpaths fewer per write. (A canonical path that is a link is a missing path's, whose
  // links canonicalize followed by hand; a link there that came back to its own name is refused below.)
  if (opts.forWrite && (abs !== lexical || isLink)) {
    // The requested name itself must not be a link: writing through it would land somewhere else.
    const requested = path.join(await canonicalize(path.dirname(lexical), policy.root), path.basename(lexical));
    const linkStat = lstatSync(osPath(requested), { throwIfNoEntry: false });
    if (linkStat?.isSymbolicLink()) {
      throw new Refusal(
        `\`${shown}\` is a symbolic link; latch does not write through links.`,
        `Write to the file it points to instead: \`${showName(rel)}\`.`,
      );
    }
  }
  return { input, abs, rel, exists };
}

/**
 * The name a path argument stands for. Without a backslash (nearly always) it is the input. An input
 * that is exactly showName's form of another path (`a\nb`, `\xff.txt`, `back\\slash`) is read as
 * that path: latch prints every backslash of a real name doubled, so its own listings read back
 * exactly. The one ambiguity, a file literally named like an escaped form (`a\n` as three characters,
 * shown `a\\n`), goes to the escaped reading when that file exists, else to the literal name when
 * that one exists (a name copied from elsewhere), else (a new file) to the escaped reading. An input
 * with a backslash that starts no escape (`a\q`, `\x41`, where showName would print `A`) is literal.
 */
function readName(root: string, input: string): string {
  const parsed = parseShown(input);
  if (parsed === undefined) return input;
  if (lexists(path.resolve(root, parsed))) return parsed;
  return lexists(path.resolve(root, input)) ? input : parsed;
}

function lexists(p: string): boolean {
  return lstatSync(osPath(p), { throwIfNoEntry: false }) !== undefined;
}

function checkDenied(policy: PathPolicy, input: string, rel: string, isDir = false): void {
  const abs = path.resolve(policy.root, rel);
  if (inControlPlane(abs, policy.controlPlane)) {
    throw new Refusal(
      `\`${input}\` is part of latch's control plane (its config, state, policy logs, policy programs or skills); no tool may read or change it.`,
      "Do not retry: this is a fixed rule, not a missing permission.",
    );
  }
  const hit = deniedSubstring(rel, policy.deniedSubstrings, isDir);
  if (hit !== undefined) {
    throw new Refusal(
      `\`${input}\` matches the denied path substring \`${hit}\` (tools_policies.local_fs._denied_path_substrings).`,
      "Do not retry with another spelling of the same path; work with other files.",
    );
  }
}

function outside(input: string, abs: string, root: string, others: readonly string[] = []): Refusal {
  if (others.length === 0)
    return new Refusal(
      `\`${input}\` resolves to ${showName(abs)}, outside the workspace ${root}.`,
      "Use a path inside the workspace; paths are relative to its root.",
    );
  return new Refusal(
    `\`${input}\` resolves to ${showName(abs)}, outside every root latch serves: ${[root, ...others].join(", ")}.`,
    `Use a path inside one of them: relative paths resolve in ${root}; a path in another root is written absolute.`,
  );
}

/**
 * The path lies in another served root (several MCP roots): the pipeline plans the call again in that
 * root. Where it cannot (the call also names a path in this root), this is the refusal the model sees.
 */
export class OtherRoot extends Refusal {
  constructor(
    readonly root: string,
    input: string,
    current: string,
  ) {
    super(
      `\`${input}\` is in the root ${root}, while this call also names a path in ${current}: a call works in one root.`,
      `Split it into one call per root, or write the call's paths absolute in ${root}; relative paths resolve in the first root.`,
    );
  }
}
