// The in-process tree walk behind the browse tools: sorted, depth-first, never through a symlink,
// skipping `.git`, `node_modules` and gitignored entries, leaving out (and counting) what the
// visibility rule hides (src/policy/visibility.ts), and folders the caller's check refuses. A hidden
// folder is not entered. Checks the call's signal between folders.
// It walks by descriptors (src/fs/beneath.ts): each folder is opened through its parent's descriptor
// with O_NOFOLLOW and listed through its own, and an entry is used through `via` (a path resolved
// through that descriptor), so a folder swapped for a link to outside mid-walk is never listed or
// read: the check and the use are the same object.
import { openSync, readdirSync, type Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { cancelled, errnoCode, Refusal } from "../errors.js";
import { openChild, openFolder, READ_FLAGS, type Folder } from "../fs/beneath.js";
import { bytesToInternal } from "../fs/names.js";
import type { Visibility } from "../policy/visibility.js";
import { isIgnored, loadAncestorLayers, loadLayer, type IgnoreLayer } from "./gitignore.js";

type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
  abs: string;
  /** Root-relative slash path. */
  rel: string;
  name: string;
  kind: EntryKind;
  /** 1 for the start folder's own children. */
  depth: number;
  /**
   * The entry named through its folder's open descriptor: what a caller opens or lstats, never `abs`.
   * Valid only until the walk moves on (the folder is closed once listed): use it before the next entry.
   */
  via: string | Buffer;
}

export interface WalkOptions {
  root: string;
  /** The folder to walk, already resolved inside the root. */
  start: { abs: string; rel: string };
  /** The one visibility rule: a hidden entry is neither yielded nor entered, only counted. */
  visibility: Pick<Visibility, "hides">;
  /** Deepest level to yield; undefined walks everything. */
  maxDepth?: number;
  signal?: AbortSignal;
  /** Whether a folder may be entered (the control plane check); a refused one is skipped whole. */
  allowDir?: (rel: string) => Promise<boolean>;
  /** Called every PROGRESS_EVERY entries with the number seen so far. */
  onProgress?: (seen: number) => void;
  /**
   * Resume a paged walk (list_dir's cursor): a root-relative path; each folder on its way is entered at
   * its component by binary search, so the entries sorting before it cost nothing. The walk may still
   * yield that path and the folders leading to it: the caller skips what sorts at or before it.
   */
  after?: string;
}

export interface WalkCounts {
  seen: number;
  ignored: number;
  /** Entries the visibility rule left out (a hidden folder counts once). */
  hidden: number;
}

/** Names skipped below the start folder; the start folder itself may be one of them. */
const SKIPPED_NAMES = new Set([".git", "node_modules"]);
const PROGRESS_EVERY = 2000;

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw cancelled();
}

/**
 * Plain code-unit order segment by segment (a folder's entries before a sibling that extends its name),
 * the same everywhere results are sorted. Comparing characters with "/" below every other one gives
 * that order without splitting the paths on each comparison.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return ca === 47 ? -1 : cb === 47 ? 1 : ca - cb;
  }
  return a.length - b.length;
}

function kindOf(d: Dirent): EntryKind {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "dir";
  if (d.isFile()) return "file";
  return "other";
}

interface Frame {
  dir: Folder;
  abs: string;
  rel: string;
  depth: number;
  layers: IgnoreLayer[];
  dirents: Dirent[];
  next: number;
}

/** Depth-first with an explicit stack: one generator, so each entry costs one yield, not one per level. */
export async function* walk(
  opts: WalkOptions,
  counts: WalkCounts = { seen: 0, ignored: 0, hidden: 0 },
): AsyncGenerator<WalkEntry> {
  const base = loadAncestorLayers(opts.root, opts.start.rel);
  const stack: Frame[] = [];
  try {
    // The start folder swapped for a link is refused with the reason (below it, such a folder is left out).
    const open = () => openFolder(opts.root, opts.start.rel, { doing: "reading" });
    const first = await openFrame(opts, open, opts.start.abs, opts.start.rel, 1, base, true);
    if (first) stack.push(first);
    while (stack.length > 0) {
      const f = stack[stack.length - 1];
      if (f.next >= f.dirents.length) {
        stack.pop()!.dir.close();
        continue;
      }
      const d = f.dirents[f.next++];
      if (SKIPPED_NAMES.has(d.name)) continue;
      const kind = kindOf(d);
      const rel = f.rel === "." ? d.name : `${f.rel}/${d.name}`;
      const isDir = kind === "dir";
      // Before .gitignore, as rg applies its -g overrides first: a gitignored secret counts as hidden.
      if (opts.visibility.hides(rel, isDir) !== undefined) {
        counts.hidden++;
        continue;
      }
      if (f.layers.length > 0 && isIgnored(f.layers, rel, isDir)) {
        counts.ignored++;
        continue;
      }
      if (isDir && opts.allowDir && !(await opts.allowDir(rel))) continue;
      counts.seen++;
      if (opts.onProgress && counts.seen % PROGRESS_EVERY === 0) opts.onProgress(counts.seen);
      const abs = f.abs + path.sep + d.name;
      yield { abs, rel, name: d.name, kind, depth: f.depth, via: f.dir.at(d.name) };
      if (isDir && (opts.maxDepth === undefined || f.depth < opts.maxDepth)) {
        const child = await openFrame(opts, () => openChild(opts.root, f.dir, d.name), abs, rel, f.depth + 1, f.layers);
        if (child) stack.push(child);
      }
    }
  } finally {
    for (const f of stack) f.dir.close();
  }
}

async function openFrame(
  opts: WalkOptions,
  open: () => Folder,
  abs: string,
  rel: string,
  depth: number,
  parentLayers: IgnoreLayer[],
  start = false,
): Promise<Frame | undefined> {
  throwIfAborted(opts.signal);
  // A folder that vanished, cannot be read, or became a link (the race: never followed) is left out, as rg does.
  const quiet = (err: unknown) => (err instanceof Refusal ? !start : skippable(err));
  let dir: Folder;
  let dirents: Dirent[];
  try {
    dir = open();
  } catch (err) {
    if (quiet(err)) return undefined;
    throw err;
  }
  try {
    dirents = await readNames(dir.self());
    dir.check(); // without /proc: still the folder opened (on Linux the listing was through it)
  } catch (err) {
    dir.close();
    if (quiet(err)) return undefined;
    throw err;
  }
  const own = dirents.some((d) => d.name === ".gitignore") ? await loadLayer(dir.at(".gitignore"), rel) : undefined;
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const next = opts.after === undefined ? 0 : resumeAt(dirents, rel, opts.after);
  return { dir, abs, rel, depth, layers: own ? [...parentLayers, own] : parentLayers, dirents, next };
}

/**
 * Open a yielded entry for reading through its folder's descriptor (before the walk moves on), or null
 * when it is gone, a link, a folder or a pipe now: skipped quietly, as rg does. The caller closes it.
 */
export function openEntry(e: Pick<WalkEntry, "via">): number | null {
  try {
    return openSync(e.via, READ_FLAGS);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENXIO" || code === "EISDIR" || skippable(err)) return null;
    throw err;
  }
}

/** A folder that went or cannot be entered: left out of a walk, not an error. */
export function skippable(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "ENOENT" || code === "EACCES" || code === "ENOTDIR" || code === "EPERM" || code === "ELOOP";
}

/**
 * A folder's entries, named as latch holds names (src/fs/names.ts). Read as strings, the fast way;
 * node decodes a name that is not valid UTF-8 to U+FFFD, losing its bytes, so a folder holding one
 * is read again as bytes.
 */
async function readNames(self: string | Buffer): Promise<Dirent[]> {
  const dirents = await readdir(self, { withFileTypes: true, encoding: "utf8" });
  return lostBytes(dirents) ? fromBytes(await readdir(self, { withFileTypes: true, encoding: "buffer" })) : dirents;
}

/** The same, synchronously (the find index's walk). */
export function readNamesSync(self: string | Buffer): Dirent[] {
  const dirents = readdirSync(self, { withFileTypes: true, encoding: "utf8" });
  return lostBytes(dirents) ? fromBytes(readdirSync(self, { withFileTypes: true, encoding: "buffer" })) : dirents;
}

const lostBytes = (dirents: Dirent[]) => dirents.some((d) => d.name.includes("\uFFFD"));
const fromBytes = (raw: Dirent<Buffer>[]) =>
  raw.map((d) => Object.assign(d, { name: bytesToInternal(d.name) }) as unknown as Dirent);

/** The first of the sorted `dirents` of folder `rel` that does not sort before the cursor `after`. */
function resumeAt(dirents: Dirent[], rel: string, after: string): number {
  const prefix = rel === "." ? "" : rel + "/";
  if (!after.startsWith(prefix)) return 0;
  const rest = after.slice(prefix.length);
  const slash = rest.indexOf("/");
  const component = slash < 0 ? rest : rest.slice(0, slash);
  let lo = 0;
  let hi = dirents.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (dirents[mid].name < component) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
