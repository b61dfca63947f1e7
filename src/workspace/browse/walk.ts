// The in-process tree walk behind the browse tools: sorted, depth-first, never through a symlink,
// skipping `.git`, `node_modules`, gitignored entries, denied substrings, and folders the caller's
// check refuses (the control plane). Checks the call's signal between folders.
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { ToolError, errnoCode } from "../../errors.js";
import { deniedSubstring } from "../paths.js";
import { isIgnored, loadAncestorLayers, loadLayer, type IgnoreLayer } from "./gitignore.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
  abs: string;
  /** Root-relative slash path. */
  rel: string;
  name: string;
  kind: EntryKind;
  /** 1 for the start folder's own children. */
  depth: number;
}

export interface WalkOptions {
  root: string;
  /** The folder to walk, already resolved inside the root. */
  start: { abs: string; rel: string };
  deniedSubstrings: readonly string[];
  /** Deepest level to yield; undefined walks everything. */
  maxDepth?: number;
  signal?: AbortSignal;
  /** Whether a folder may be entered (the control plane check); a refused one is skipped whole. */
  allowDir?: (rel: string) => Promise<boolean>;
  /** Called every PROGRESS_EVERY entries with the number seen so far. */
  onProgress?: (seen: number) => void;
}

export interface WalkCounts {
  seen: number;
  ignored: number;
}

/** Names skipped below the start folder; the start folder itself may be one of them. */
export const SKIPPED_NAMES = new Set([".git", "node_modules"]);
const PROGRESS_EVERY = 2000;

export function cancelled(): ToolError {
  return new ToolError("ECANCELED", "The call was cancelled before it finished; nothing was changed. Retry it if you still need it.");
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw cancelled();
}

/** Plain code-unit order, the same everywhere results are sorted. */
export function comparePaths(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

function kindOf(d: Dirent): EntryKind {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "dir";
  if (d.isFile()) return "file";
  return "other";
}

export async function* walk(opts: WalkOptions, counts: WalkCounts = { seen: 0, ignored: 0 }): AsyncGenerator<WalkEntry> {
  const base = await loadAncestorLayers(opts.root, opts.start.rel);
  yield* walkDir(opts, opts.start.abs, opts.start.rel, 1, base, counts);
}

async function* walkDir(opts: WalkOptions, abs: string, rel: string, depth: number, parentLayers: IgnoreLayer[], counts: WalkCounts): AsyncGenerator<WalkEntry> {
  throwIfAborted(opts.signal);
  let dirents: Dirent[];
  try {
    dirents = await readdir(abs, { withFileTypes: true });
  } catch (err) {
    // A folder that vanished or cannot be read is left out, as rg does.
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "EACCES" || code === "ENOTDIR" || code === "EPERM") return;
    throw err;
  }
  const own = await loadLayer(abs, rel);
  const layers = own ? [...parentLayers, own] : parentLayers;
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of dirents) {
    if (SKIPPED_NAMES.has(d.name)) continue;
    const kind = kindOf(d);
    const childRel = rel === "." ? d.name : `${rel}/${d.name}`;
    const isDir = kind === "dir";
    if (deniedSubstring(childRel, opts.deniedSubstrings as string[], isDir) !== undefined) continue;
    if (layers.length > 0 && isIgnored(layers, childRel, isDir)) {
      counts.ignored++;
      continue;
    }
    if (isDir && opts.allowDir && !(await opts.allowDir(childRel))) continue;
    counts.seen++;
    if (opts.onProgress && counts.seen % PROGRESS_EVERY === 0) opts.onProgress(counts.seen);
    const childAbs = path.join(abs, d.name);
    yield { abs: childAbs, rel: childRel, name: d.name, kind, depth };
    if (isDir && (opts.maxDepth === undefined || depth < opts.maxDepth)) {
      yield* walkDir(opts, childAbs, childRel, depth + 1, layers, counts);
    }
  }
}
