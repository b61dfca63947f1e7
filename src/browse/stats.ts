// stat_file and count_stats: metadata of one path, and line/word/byte counts of a file or a tree
// (gitignored files skipped, binary files counted in bytes only).
import { closeSync, fstatSync, read, readSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { promisify } from "node:util";
import { ToolError } from "../errors.js";
import { hardLinkRefusal, lstatBeneath, openFileBeneath } from "../fs/beneath.js";
import path from "node:path";
import type { ResolvedPath } from "../fs/paths.js";
import { humanSize, looksBinary, SNIFF_BYTES } from "../fs/text.js";
import type { Visibility } from "../policy/visibility.js";
import { makeDirCheck, makeVisibility, type Resolve } from "./visible.js";
import { openEntry, throwIfAborted, walk } from "./walk.js";
import { osPath, showName } from "../fs/names.js";

export async function describePath(target: ResolvedPath, requested: string): Promise<Record<string, unknown>> {
  // Through the walk by descriptors (src/fs/beneath.ts): a folder swapped for a link since the path
  // was resolved is refused, not followed to describe (or sniff) a file outside.
  const st = lstatBeneath(target);
  if (st === undefined)
    throw new ToolError(
      "ENOENT",
      `\`${showName(target.rel)}\` does not exist. Check the name with find_files or list_dir.`,
    );
  const link = await lstat(osPath(requested)).catch(() => undefined); // the name asked for may be gone already: not a link then
  let binary = false;
  if (st.isFile()) {
    const fd = openFileBeneath(target);
    if (fd !== null) {
      try {
        const head = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
        const bytesRead = readSync(fd, head, 0, head.length, 0);
        binary = looksBinary(head.subarray(0, bytesRead));
      } finally {
        closeSync(fd);
      }
    }
  }
  return {
    // The name asked for (a link keeps its own name); `path` is where it leads.
    name: target.rel === "." && !link?.isSymbolicLink() ? "." : showName(path.basename(requested)),
    path: showName(target.rel),
    size: st.size,
    size_human: humanSize(st.size),
    mtime: st.mtime.toISOString(),
    is_dir: st.isDirectory(),
    is_symlink: link?.isSymbolicLink() ?? false,
    mode: (st.mode & 0o7777).toString(8).padStart(4, "0"),
    executable: st.isFile() && (st.mode & 0o111) !== 0,
    binary,
  };
}

export interface Counts {
  lines: number;
  words: number;
  bytes: number;
}

const CHUNK = 1 << 20;

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * Counts of one file named by the resolver, opened through the walk by descriptors (a folder swapped for
 * a link on the way is refused, not followed); a hard-linked file is refused as read_file refuses it.
 */
export async function countPath(target: ResolvedPath, signal?: AbortSignal): Promise<Counts & { binary: boolean }> {
  const fd = openFileBeneath(target);
  if (fd === null)
    throw new ToolError(
      "ENOENT",
      `\`${showName(target.rel)}\` does not exist. Check the name with find_files or list_dir.`,
    );
  try {
    const links = fstatSync(fd).nlink;
    if (links > 1) throw hardLinkRefusal(target.rel, links);
    return (await countFile(fd, signal)) ?? { lines: 0, words: 0, bytes: 0, binary: false };
  } finally {
    closeSync(fd);
  }
}

const readAt = promisify(read);

/**
 * Lines (a last line without a newline counts), words (runs of non-space bytes), bytes of the file open
 * at `fd` (the caller opened it through the walk and closes it). Not a regular file with one link
 * (a pipe swapped in, a hard link to a file maybe outside): nothing counted.
 */
async function countFile(fd: number, signal?: AbortSignal): Promise<(Counts & { binary: boolean }) | undefined> {
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink > 1) return undefined;
  const buf = Buffer.allocUnsafe(CHUNK);
  let lines = 0;
  let words = 0;
  let bytes = 0;
  let inWord = false;
  let last = 10;
  let binary = false;
  for (;;) {
    throwIfAborted(signal);
    const { bytesRead } = await readAt(fd, buf, 0, CHUNK, bytes);
    if (bytesRead === 0) break;
    if (bytes === 0 && looksBinary(buf.subarray(0, Math.min(bytesRead, SNIFF_BYTES)))) binary = true;
    bytes += bytesRead;
    if (binary) continue;
    for (let i = 0; i < bytesRead; i++) {
      const c = buf[i];
      if (c === 10) lines++;
      if (isSpace(c)) inWord = false;
      else if (!inWord) {
        inWord = true;
        words++;
      }
    }
    last = buf[bytesRead - 1];
  }
  if (!binary && bytes > 0 && last !== 10) lines++;
  return binary ? { lines: 0, words: 0, bytes, binary } : { lines, words, bytes, binary };
}

export interface TreeRequest {
  root: string;
  start: { abs: string; rel: string };
  visibility: Pick<Visibility, "hides">;
  resolve: Resolve;
  signal: AbortSignal;
  onProgress: (files: number) => void;
}

const PARALLEL = 4;
const MAX_EXTENSIONS = 30;

export async function countTree(req: TreeRequest): Promise<Record<string, unknown>> {
  const visible = makeVisibility(req.resolve);
  const total: Counts = { lines: 0, words: 0, bytes: 0 };
  const byExt = new Map<string, Counts & { files: number }>();
  let files = 0;
  let binaryFiles = 0;
  // `fd`: the file opened through its walked folder as the walk yielded it; closed here.
  const one = async (fd: number, rel: string, name: string) => {
    let c;
    try {
      if (!(await visible(rel))) return;
      c = await countFile(fd, req.signal);
    } finally {
      closeSync(fd);
    }
    if (!c) return;
    files++;
    if (c.binary) binaryFiles++;
    total.lines += c.lines;
    total.words += c.words;
    total.bytes += c.bytes;
    const ext = path.extname(name) || "(none)";
    const e = byExt.get(ext) ?? { files: 0, lines: 0, words: 0, bytes: 0 };
    e.files++;
    e.lines += c.lines;
    e.words += c.words;
    e.bytes += c.bytes;
    byExt.set(ext, e);
    if (files % 1000 === 0) req.onProgress(files);
  };
  const pending = new Set<Promise<void>>();
  const counts = { seen: 0, ignored: 0, hidden: 0 };
  const walker = walk(
    {
      root: req.root,
      start: req.start,
      visibility: req.visibility,
      allowDir: makeDirCheck(req.resolve),
      signal: req.signal,
    },
    counts,
  );
  for await (const e of walker) {
    if (e.kind !== "file") continue;
    const fd = openEntry(e); // null: vanished, or no longer a file, since the folder was listed
    if (fd === null) continue;
    const p = one(fd, e.rel, e.name).finally(() => pending.delete(p));
    pending.add(p);
    if (pending.size >= PARALLEL) await Promise.race(pending);
  }
  await Promise.all(pending);
  throwIfAborted(req.signal);
  const sorted = [...byExt.entries()].sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1));
  const result: Record<string, unknown> = {
    path: req.start.rel,
    files,
    ...total,
    binary_files: binaryFiles,
    by_extension: Object.fromEntries(sorted.slice(0, MAX_EXTENSIONS)),
  };
  if (counts.hidden > 0) result.hidden = counts.hidden;
  if (sorted.length > MAX_EXTENSIONS)
    result.note = `${sorted.length - MAX_EXTENSIONS} more extensions are left out of by_extension (the ${MAX_EXTENSIONS} largest by bytes are shown); totals include them.`;
  return result;
}
