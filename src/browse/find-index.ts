// find_files' walk: in-process, by descriptors, and remembering each steady folder's outcome for the
// host's next call (FolderIndex). A folder's outcome (the files and folders it shows, what the
// visibility rule hid in it) depends on its entries, the .gitignore files that apply, and the rule;
// it is reused only while all three are provably the same:
// - the folder, opened (or lstat-ed) through its parent's descriptor, has the device, inode, ctime and
//   mtime it had when it was listed, and its ctime then was older than STEADY_MARGIN_MS before the
//   listing began. An entry made, renamed or removed in it moves its ctime, and nobody can set a
//   ctime back, so its entries now are its entries then (a file still a file, a folder still that
//   folder: a swap would be a rename in it);
// - its own .gitignore holds the text it held (read again at each call: a write through a shared
//   mapping changes a file without moving its times), and the .gitignore files above it are those of
//   the walk that kept it (a chain id, interned from each one's folder and text);
// - the rule is the same (Visibility.key).
// Off the filesystems that keep ctimes so (STEADY_FS) nothing is kept. Where a folder was listed now
// and not steady, each file shown is looked up again through the folder before it is named.
import { hash } from "node:crypto";
import { fstatSync, lstatSync, type BigIntStats } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { errnoCode, Refusal } from "../errors.js";
import { beneathMode, openChild, openFolder, type Folder } from "../fs/beneath.js";
import { showName } from "../fs/names.js";
import type { Visibility } from "../policy/visibility.js";
import { keepsSteadyTimes, STEADY_MARGIN_MS } from "./confirm.js";
import {
  ancestorIgnores,
  insideIgnored,
  isIgnored,
  layerOf,
  readIgnore,
  readIgnoreText,
  type IgnoreLayer,
} from "./gitignore.js";
import { readNamesSync, skippable, throwIfAborted } from "./walk.js";

/** What the index may hold for the host, in estimated heap bytes; past it, it starts again empty. */
const MAX_BYTES = 64 << 20;
/** Rules kept (one per envelope and tool that walks): the least recently used goes first. */
const MAX_RULES = 4;
const PROGRESS_EVERY = 2000;
/** The most time the walk holds the event loop before it lets other calls run (ms), checked every 256 entries. */
const TURN_MS = 10;
/** Names skipped below the start folder (as walk.ts). */
const SKIPPED_NAMES = new Set([".git", "node_modules"]);

/** One folder's outcome under one rule. */
interface Listed {
  /** dev:ino:ctime:mtime of the folder when listed; "" when it was not steady (never kept). */
  stamp: string;
  /** The chain id of the .gitignore files above it when listed. */
  above: number;
  /**
   * Its own .gitignore: the text it was read with (undefined: unreadable) and the chain id below it.
   * Not its rules: a rule set caches every path it tested, which a deep chain makes large; they are
   * made again from the text in a call that lists a folder below it.
   */
  own?: { text: string | undefined; chain: number; odd: boolean };
  /** Shown entries, sorted: regular files, and folders to enter. */
  files: string[];
  dirs: string[];
  /** Entries the visibility rule hid (a hidden folder once), and entries shown of any kind. */
  hidden: number;
  seen: number;
  /** The folder's ctime (ns) when listed: its ctime now wherever the outcome is reused (the stamp holds it). */
  ctimeNs: bigint;
}

/** What a host keeps between find_files calls (one per host: roots and rules are part of the key). */
export class FolderIndex {
  private readonly rules = new Map<string, Map<string, Listed>>();
  /** .gitignore chains: parent chain, folder and text hash → id. Ids are never reused. */
  private readonly chains = new Map<string, number>();
  private nextChain = 1;
  private used = 0;

  constructor(private readonly maxBytes = MAX_BYTES) {}

  /** The estimated heap bytes held now. */
  get bytes(): number {
    return this.used;
  }

  /** Marks a rule (its key: root and Visibility.key) used, making room for it. */
  use(rule: string): void {
    const m = this.rules.get(rule);
    if (m) this.rules.delete(rule);
    this.rules.set(rule, m ?? new Map<string, Listed>());
    if (this.rules.size > MAX_RULES) {
      const [oldest, gone] = this.rules.entries().next().value!;
      this.rules.delete(oldest);
      for (const [rel, l] of gone) this.used -= costOf(rel, l);
    }
  }

  get(rule: string, rel: string): Listed | undefined {
    return this.rules.get(rule)?.get(rel);
  }

  /** Keeps a steady folder's outcome; under a rule no longer kept, nothing. */
  keep(rule: string, rel: string, l: Listed): void {
    const m = this.rules.get(rule);
    if (!m) return;
    this.drop(rule, rel);
    const cost = costOf(rel, l);
    if (this.used + cost > this.maxBytes) this.clear();
    if (cost > this.maxBytes) return;
    m.set(rel, l);
    this.used += cost;
  }

  drop(rule: string, rel: string): void {
    const m = this.rules.get(rule);
    const had = m?.get(rel);
    if (!had) return;
    m!.delete(rel);
    this.used -= costOf(rel, had);
  }

  /** The id of the .gitignore chain `parent` extended by folder `rel`'s file holding `text`. */
  chain(parent: number, rel: string, text: string | undefined): number {
    const key = `${parent}|${rel}|${text === undefined ? "-" : hash("sha256", text, "base64")}`;
    let id = this.chains.get(key);
    if (id === undefined) {
      const cost = 2 * key.length + 64;
      if (this.used + cost > this.maxBytes) this.clear();
      id = this.nextChain++;
      if (cost > this.maxBytes) return id; // not kept: folders below it are never reused
      this.chains.set(key, id);
      this.used += cost;
    }
    return id;
  }

  private clear(): void {
    for (const m of this.rules.values()) m.clear();
    this.chains.clear();
    this.used = 0;
  }
}

/** A kept outcome's heap, estimated: the entry and arrays, each name as a string, its .gitignore's text. */
function costOf(rel: string, l: Listed): number {
  let n = 256 + 2 * rel.length + 2 * (l.own?.text?.length ?? 0);
  for (const f of l.files) n += 32 + 2 * f.length;
  for (const d of l.dirs) n += 32 + 2 * d.length;
  return n;
}

export interface IndexedWalk {
  root: string;
  /** The folder to walk, already resolved inside the root. */
  start: { abs: string; rel: string };
  visibility: Pick<Visibility, "hides" | "key">;
  /** Whether a folder may be entered (the resolver's check); asked when its parent is listed. */
  allowDir?: (rel: string) => Promise<boolean>;
  /** Whether a regular file (root-relative path) is wanted. */
  want: (rel: string) => boolean;
  signal: AbortSignal;
  onProgress?: (seen: number) => void;
  /** The host's index; without one every folder is listed. */
  index?: FolderIndex;
  /**
   * Told of each folder entered, before its files are wanted, with its ctime now (ns), and whether its
   * .gitignore is one rg may read otherwise (readIgnore's `odd`); told too of such a file above the start.
   */
  onFolder?: (rel: string, ctimeNs: bigint, oddIgnore: boolean) => void;
}

interface Frame {
  dir: Folder;
  rel: string;
  listed: Listed;
  /** The .gitignore rules that apply to its entries (made when a folder below is listed), and their chain id. */
  layers: () => IgnoreLayer[];
  above: number;
  next: number;
}

/** The wanted files below the start folder (root-relative, unsorted) and the count of hidden entries. */
export async function walkIndexed(w: IndexedWalk): Promise<{ files: string[]; hidden: number }> {
  const steadyFs = w.index !== undefined && beneathMode.proc && keepsSteadyTimes(w.root);
  const index = w.index ?? new FolderIndex();
  const rule = steadyFs ? JSON.stringify([w.root, w.visibility.key]) : undefined;
  if (rule) index.use(rule);
  const out: string[] = [];
  let hidden = 0;
  let seen = 0;
  const pace = new Pace(w.signal);
  /** Counts a folder's outcome and takes its wanted files (looked up again where it was not steady). */
  const take = (rel: string, listed: Listed, dir?: Folder) => {
    w.onFolder?.(rel, listed.ctimeNs, listed.own?.odd === true);
    const prefix = rel === "." ? "" : rel + "/";
    for (const name of listed.files) {
      const path = prefix + name;
      if (w.want(path) && (listed.stamp !== "" || (dir !== undefined && isFileIn(dir, name)))) out.push(path);
    }
    hidden += listed.hidden;
    const before = seen;
    seen += listed.seen;
    if (w.onProgress && Math.floor(seen / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY)) w.onProgress(seen);
  };
  const visit = async (dir: Folder, layers: () => IgnoreLayer[], above: number): Promise<Frame> => {
    const had = rule ? index.get(rule, dir.rel) : undefined;
    let listed = had && reusable(had, dir, above) ? had : undefined;
    let below: IgnoreLayer[] | undefined;
    if (!listed) {
      const fresh = await list(w, index, pace, dir, layers(), above);
      listed = fresh.listed;
      below = fresh.layers;
      if (rule && listed.stamp !== "") index.keep(rule, dir.rel, listed);
      else if (rule) index.drop(rule, dir.rel);
    }
    take(dir.rel, listed, dir);
    const own = listed.own;
    const text = own?.text;
    let made = below;
    return {
      dir,
      rel: dir.rel,
      listed,
      layers: () => (made ??= text === undefined ? layers() : [...layers(), layerOf(text, dir.rel)]),
      above: own ? own.chain : above,
      next: 0,
    };
  };
  const stack: Frame[] = [];
  try {
    const base = ancestorLayers(w.root, w.start.rel, index);
    if (base.odd !== undefined) w.onFolder?.(base.odd, 0n, true);
    // A folder inside a gitignored one is never entered by a walk, even when the path names it.
    if (insideIgnored(base.layers, w.start.rel)) return { files: [], hidden: 0 };
    let first: Folder;
    try {
      // The start folder swapped for a link is refused with the reason (below it, such a folder is left out).
      first = openFolder(w.root, w.start.rel, { doing: "reading" });
    } catch (err) {
      if (!(err instanceof Refusal) && skippable(err)) return { files: [], hidden: 0 };
      throw err;
    }
    try {
      stack.push(await visit(first, () => base.layers, base.chain));
    } catch (err) {
      first.close();
      if (skippable(err)) return { files: [], hidden: 0 };
      throw err;
    }
    while (stack.length > 0) {
      const f = stack[stack.length - 1];
      if (f.next >= f.listed.dirs.length) {
        stack.pop()!.dir.close();
        continue;
      }
      const name = f.listed.dirs[f.next++];
      await pace.step();
      const rel = f.rel === "." ? name : `${f.rel}/${name}`;
      // A kept folder without subfolders or .gitignore is judged by an lstat through its parent's
      // descriptor (the entry itself, not followed): no open of its own.
      const had = rule ? index.get(rule, rel) : undefined;
      if (had && had.dirs.length === 0 && !had.own && had.above === f.above) {
        const st = lstatQuiet(f.dir.at(name));
        if (st && stampOf(st) === had.stamp) {
          take(rel, had);
          continue;
        }
      }
      let child: Folder;
      try {
        child = openChild(w.root, f.dir, name);
      } catch (err) {
        // Vanished, unreadable, or a link now (the race: never followed): left out, as the walk does.
        if (err instanceof Refusal || skippable(err)) continue;
        throw err;
      }
      try {
        stack.push(await visit(child, f.layers, f.above));
      } catch (err) {
        child.close();
        if (skippable(err)) continue;
        throw err;
      }
    }
  } finally {
    for (const f of stack) f.dir.close();
  }
  return { files: out, hidden };
}

/** Whether a kept outcome stands for the open folder: its stamp unchanged, its .gitignore's text too. */
function reusable(had: Listed, dir: Folder, above: number): boolean {
  if (had.above !== above) return false;
  if (stampOf(fstatSync(dir.fd, { bigint: true })) !== had.stamp) return false;
  return !had.own || readIgnoreText(dir.at(".gitignore")) === had.own.text;
}

/**
 * List one folder and judge its entries as walk.ts does (the rule first, then .gitignore, then the
 * resolver for folders). Its stamp is "" when it may not be kept: it changed while listed, or within
 * the margin before (a change in the same clock tick keeps a ctime).
 */
async function list(
  w: IndexedWalk,
  index: FolderIndex,
  pace: Pace,
  dir: Folder,
  layers: IgnoreLayer[],
  above: number,
): Promise<{ listed: Listed; layers: IgnoreLayer[] }> {
  const began = BigInt(Date.now() - STEADY_MARGIN_MS) * 1_000_000n;
  const before = fstatSync(dir.fd, { bigint: true });
  const dirents = readNamesSync(dir.self());
  dir.check();
  let own: Listed["own"];
  let all = layers;
  if (dirents.some((d) => d.name === ".gitignore")) {
    const { text, odd } = readIgnore(dir.at(".gitignore"));
    own = { text, chain: index.chain(above, dir.rel, text), odd };
    if (text !== undefined) all = [...layers, layerOf(text, dir.rel)];
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const prefix = dir.rel === "." ? "" : dir.rel + "/";
  const listed: Listed = { stamp: "", above, own, files: [], dirs: [], hidden: 0, seen: 0, ctimeNs: before.ctimeNs };
  for (let i = 0; i < dirents.length; i++) {
    const d = dirents[i];
    if ((i & 255) === 255) await pace.step();
    if (SKIPPED_NAMES.has(d.name)) continue;
    const rel = prefix + d.name;
    const isDir = d.isDirectory();
    // Before .gitignore, as rg applies its -g overrides first: a gitignored secret counts as hidden.
    if (w.visibility.hides(rel, isDir) !== undefined) {
      listed.hidden++;
      continue;
    }
    if (all.length > 0 && isIgnored(all, rel, isDir)) continue;
    // The resolver adds nothing for a folder opened from its parent's descriptor (its control-plane and
    // denied-substring checks are the rule's, and the folder is no link) unless its name is shown
    // escaped and so read back through parseShown: only then is it asked (walk.ts asks for every one).
    if (isDir && w.allowDir && showName(d.name) !== d.name && !(await w.allowDir(rel))) continue;
    listed.seen++;
    if (isDir) listed.dirs.push(d.name);
    else if (d.isFile()) listed.files.push(d.name);
  }
  const now = fstatSync(dir.fd, { bigint: true });
  const after = stampOf(now);
  listed.ctimeNs = now.ctimeNs;
  if (before.ctimeNs < began && after === stampOf(before)) listed.stamp = after;
  return { listed, layers: all };
}

/** Lets other calls run once the walk has held the event loop TURN_MS; a cancelled call stops there. */
class Pace {
  private since = performance.now();

  constructor(private readonly signal: AbortSignal) {}

  async step(): Promise<void> {
    if (performance.now() - this.since > TURN_MS) {
      await nextTurn();
      this.since = performance.now();
    }
    throwIfAborted(this.signal);
  }
}

function stampOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.ctimeNs}:${st.mtimeNs}`;
}

/**
 * The .gitignore layers of the folders above the start (the root's down to its parent) and their
 * chain id, as the walk from the root would have made them.
 */
function ancestorLayers(
  root: string,
  startRel: string,
  index: FolderIndex,
): { layers: IgnoreLayer[]; chain: number; odd?: string } {
  const layers: IgnoreLayer[] = [];
  let chain = 0;
  let odd: string | undefined;
  for (const { dir, text, odd: isOdd } of ancestorIgnores(root, startRel)) {
    if (isOdd) odd ??= dir === "" ? "." : dir;
    if (text !== undefined) layers.push(layerOf(text, dir));
    chain = index.chain(chain, dir, text);
  }
  return { layers, chain, odd };
}

/** Whether `name` in `dir` is a regular file now (a listing that was not steady is confirmed so). */
function isFileIn(dir: Folder, name: string): boolean {
  return lstatQuiet(dir.at(name))?.isFile() === true;
}

/** An entry's stat, not followed; undefined when it is missing or cannot be seen. */
function lstatQuiet(p: string | Buffer): BigIntStats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false, bigint: true });
  } catch (err) {
    if (errnoCode(err) === "EACCES" || errnoCode(err) === "ENOTDIR") return undefined;
    throw err;
  }
}
