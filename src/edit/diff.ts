// The unified diff a person approves: of the exact bytes a write tool would write, against the bytes
// on disk now. ±3 lines of context; the changed region of each side is capped at 500 lines (the
// unchanged head and tail of a big file are skipped before diffing, so a one-line edit in a huge file
// still diffs exactly); the printed diff is capped at 120 lines, with a marker when cut.
import { isUtf8 } from "node:buffer";
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff";
import type { ReadKind } from "../fs/ledger.js";
import type { ResolvedPath } from "../fs/paths.js";
import { countNewlines, looksBinary } from "../fs/text.js";

const DIFF_CONTEXT = 3;
const MAX_SIDE_LINES = 500;
export const MAX_DIFF_LINES = 120;

export interface BuiltDiff {
  /** The unified diff, or undefined when none can be shown (then `note` says why). */
  diff?: string;
  /** Said to the person: that the diff was cut, or why there is none. */
  note?: string;
  /** Whether `diff` shows the whole change (safe to apply as a patch). */
  complete: boolean;
}

/** Lines with their endings kept, so windows join back into the exact bytes. */
function splitKeep(text: string): string[] {
  const lines: string[] = [];
  let at = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", at)) {
    lines.push(text.slice(at, nl + 1));
    at = nl + 1;
  }
  if (at < text.length) lines.push(text.slice(at));
  return lines;
}

/**
 * The whole lines that `a` and `b` both start with and both end with, less DIFF_CONTEXT of each (the
 * diff's context): their bytes, and how many lines the head is. The end is sought only past the bytes
 * the start shares (as the line loops count the tail only past the head), so the two never overlap.
 * The tail's lines need no count: the DIFF_CONTEXT kept of them are all a diff shows of the tail.
 */
function sharedEnds(a: Buffer, b: Buffer): { headBytes: number; headLines: number; tailBytes: number } {
  const n = Math.min(a.length, b.length);
  const p = sharedPrefix(a, b, n);
  // The lines before the last "\n" of the shared bytes, less the context kept.
  let headBytes = p === 0 ? 0 : a.lastIndexOf(NL, p - 1) + 1;
  // (headBytes - 2 ≥ 0: a negative offset would search from the end.)
  for (let k = 0; k < DIFF_CONTEXT && headBytes > 0; k++)
    headBytes = headBytes < 2 ? 0 : a.lastIndexOf(NL, headBytes - 2) + 1;
  const s = sharedSuffix(a, b, n - p);
  // The first line start inside the shared end on both sides, then the context kept.
  let tailStart = a.length - s;
  // A line starts at x in a, and at the same place of the shared end in b (y).
  const onBoth = (x: number, y = x - a.length + b.length) =>
    (x === 0 || a[x - 1] === NL) && (y === 0 || b[y - 1] === NL);
  if (s > 0 && !onBoth(tailStart)) tailStart = next(a, tailStart);
  for (let k = 0; k < DIFF_CONTEXT && tailStart < a.length; k++) tailStart = next(a, tailStart);
  return { headBytes, headLines: countNewlines(a, 0, headBytes), tailBytes: a.length - tailStart };
}

const NL = 0x0a;

/** The start of the line after the one at `x` (the end of `buf` when it is the last). */
function next(buf: Buffer, x: number): number {
  const nl = buf.indexOf(NL, x);
  return nl === -1 ? buf.length : nl + 1;
}

/** How many bytes a and b start with alike (of the first n): memcmp over doubling spans, then halving the one that differs. */
function sharedPrefix(a: Buffer, b: Buffer, n: number): number {
  for (let at = 0, span = 64; at < n; span *= 2) {
    let end = Math.min(n, at + span);
    if (a.compare(b, at, end, at, end) === 0) {
      at = end;
      continue;
    }
    // The first difference lies in [at, end): halve it while it is long, then go byte by byte.
    while (end - at > 16) {
      const mid = (at + end) >>> 1;
      if (a.compare(b, at, mid, at, mid) === 0) at = mid;
      else end = mid;
    }
    while (a[at] === b[at]) at++;
    return at;
  }
  return n;
}

/** How many bytes a and b end with alike, at most `max`. */
function sharedSuffix(a: Buffer, b: Buffer, max: number): number {
  const la = a.length;
  const lb = b.length;
  for (let k = 0, span = 64; k < max; span *= 2) {
    let end = Math.min(max, k + span);
    if (a.compare(b, lb - end, lb - k, la - end, la - k) === 0) {
      k = end;
      continue;
    }
    // The last k bytes are alike and the last `end` are not: halve, then byte by byte.
    while (end - k > 16) {
      const mid = (k + end) >>> 1;
      if (a.compare(b, lb - mid, lb - k, la - mid, la - k) === 0) k = mid;
      else end = mid;
    }
    while (a[la - 1 - k] === b[lb - 1 - k]) k++;
    return k;
  }
  return max;
}

/**
 * The diff of a change to several files, one section per file. A removed file diffs to /dev/null; a
 * moved one names both paths. Notes are joined, each prefixed with its file.
 */
export function buildFilesDiff(files: PreviewFile[]): BuiltDiff {
  const parts: string[] = [];
  const notes: string[] = [];
  let complete = true;
  for (const f of files) {
    const d = buildDiff(f.rel, f.before, f.after, f.fromRel);
    if (d.diff) parts.push(d.diff);
    if (d.note) notes.push(`${f.rel}: ${d.note}`);
    complete &&= d.complete;
  }
  return { diff: parts.join(""), complete, ...(notes.length ? { note: notes.join("; ") } : {}) };
}

/** `after` null: the file is removed; `fromRel`: the file moves from there (same content unless changed). */
export function buildDiff(rel: string, before: Buffer | null, after: Buffer | null, fromRel?: string): BuiltDiff {
  const removed = after === null;
  after ??= Buffer.alloc(0);
  for (const [side, buf] of [
    ["current", before],
    ["new", after],
  ] as const) {
    if (buf !== null && (looksBinary(buf) || !isUtf8(buf)))
      return { complete: false, note: `no diff: the ${side} content is not UTF-8 text` };
  }
  if (before !== null && before.equals(after) && !removed && fromRel === undefined)
    return { complete: true, diff: "", note: "no change: the new content equals the current content" };
  const current = before ?? Buffer.alloc(0);
  // Only the middle is decoded and split: the whole lines both sides start and end with are found on
  // the bytes, and all but DIFF_CONTEXT of them skipped (a one-line edit of 16 KB: 180 µs → 15; of
  // 1.8 MB: 33 ms → 0.45; bench/edit-parts.ts).
  const ends = sharedEnds(current, after);
  const oldLines = splitKeep(current.toString("utf8", ends.headBytes, current.length - ends.tailBytes));
  const newLines = splitKeep(after.toString("utf8", ends.headBytes, after.length - ends.tailBytes));

  // Skip the common head and tail (keeping context), then cap what is left per side. In whole-file
  // lines: oldLines[0] is line ends.headLines of the file.
  let h = 0;
  while (h < oldLines.length && h < newLines.length && oldLines[h] === newLines[h]) h++;
  let t = 0;
  while (
    t < oldLines.length - h &&
    t < newLines.length - h &&
    oldLines[oldLines.length - 1 - t] === newLines[newLines.length - 1 - t]
  )
    t++;
  const at = ends.headLines;
  const head = at + h;
  const from = Math.max(0, head - DIFF_CONTEXT);
  let oldTo = at + oldLines.length - Math.max(0, t - DIFF_CONTEXT);
  let newTo = at + newLines.length - Math.max(0, t - DIFF_CONTEXT);
  let complete = true;
  if (oldTo - head > MAX_SIDE_LINES || newTo - head > MAX_SIDE_LINES) {
    complete = false;
    oldTo = Math.min(oldTo, head + MAX_SIDE_LINES);
    newTo = Math.min(newTo, head + MAX_SIDE_LINES);
  }
  const patch = structuredPatch(
    before === null ? "/dev/null" : `a/${fromRel ?? rel}`,
    removed ? "/dev/null" : `b/${rel}`,
    oldLines.slice(from - at, oldTo - at).join(""),
    newLines.slice(from - at, newTo - at).join(""),
    undefined,
    undefined,
    { context: DIFF_CONTEXT },
  );
  for (const h of patch.hunks) {
    h.oldStart += from;
    h.newStart += from;
  }
  let lines = formatPatch(patch, FILE_HEADERS_ONLY).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const notes: string[] = [];
  if (!complete)
    notes.push(
      `the change is longer than ${MAX_SIDE_LINES} lines on a side; the diff shows its first ${MAX_SIDE_LINES}`,
    );
  if (lines.length > MAX_DIFF_LINES) {
    notes.push(`the diff has ${lines.length} lines; only the first ${MAX_DIFF_LINES} are shown`);
    lines = [
      ...lines.slice(0, MAX_DIFF_LINES),
      `\\ latch: diff cut here (${lines.length - MAX_DIFF_LINES} more lines)`,
    ];
    complete = false;
  } else if (!complete) {
    lines.push(`\\ latch: diff cut here (the change continues past line ${head + MAX_SIDE_LINES})`);
  }
  return { diff: lines.join("\n") + "\n", complete, ...(notes.length ? { note: notes.join("; ") } : {}) };
}

/** One file of a multi-file change (apply_patch, move_file, delete_file), as previews and diffs show it. */
export interface PreviewFile {
  rel: string;
  /** A move: where the content came from. */
  fromRel?: string;
  before: Buffer | null;
  /** null: the file is removed. */
  after: Buffer | null;
  /** The file `before` was read from (for a dry run's read-before-write check), and the read it needs (none: undefined). */
  source: ResolvedPath;
  needs?: ReadKind;
}
