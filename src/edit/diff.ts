// The unified diff a person approves: of the exact bytes a write tool would write, against the bytes
// on disk now. ±3 lines of context; the changed region of each side is capped at 500 lines (the
// unchanged head and tail of a big file are skipped before diffing, so a one-line edit in a huge file
// still diffs exactly); the printed diff is capped at 120 lines, with a marker when cut.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff";
import type { ReadKind } from "../fs/ledger.js";
import type { ResolvedPath } from "../fs/paths.js";
import { looksBinary } from "../fs/text.js";

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
  if (text === "") return [];
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
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
    if (buf === null) continue;
    const text = buf.toString("utf8");
    if (looksBinary(buf) || !Buffer.from(text, "utf8").equals(buf))
      return { complete: false, note: `no diff: the ${side} content is not UTF-8 text` };
  }
  const oldLines = splitKeep(before === null ? "" : before.toString("utf8"));
  const newLines = splitKeep(after.toString("utf8"));
  if (before !== null && before.equals(after) && !removed && fromRel === undefined)
    return { complete: true, diff: "", note: "no change: the new content equals the current content" };

  // Skip the common head and tail (keeping context), then cap what is left per side.
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  )
    tail++;
  const from = Math.max(0, head - DIFF_CONTEXT);
  let oldTo = oldLines.length - Math.max(0, tail - DIFF_CONTEXT);
  let newTo = newLines.length - Math.max(0, tail - DIFF_CONTEXT);
  let complete = true;
  if (oldTo - head > MAX_SIDE_LINES || newTo - head > MAX_SIDE_LINES) {
    complete = false;
    oldTo = Math.min(oldTo, head + MAX_SIDE_LINES);
    newTo = Math.min(newTo, head + MAX_SIDE_LINES);
  }
  const patch = structuredPatch(
    before === null ? "/dev/null" : `a/${fromRel ?? rel}`,
    removed ? "/dev/null" : `b/${rel}`,
    oldLines.slice(from, oldTo).join(""),
    newLines.slice(from, newTo).join(""),
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
