// The pure transform behind hash_edit: current text + anchored edits → new text, or a refusal. The
// same function serves the write (under the lock, inside mutate) and the approval preview, so the
// diff a person approves is the write that happens.
import { LOCAL_FILES } from "../fs/backend.js";
import { openCurrent } from "../fs/current.js";
import { Refusal, ToolError, expected } from "../errors.js";
import {
  formatAnchored,
  lineId,
  looksAnchored,
  parseAnchor,
  splitLines,
  StaleAnchors,
  staleRefusal,
  type Anchor,
  type Line,
  type StaleAnchor,
} from "./anchors.js";
import type { MutationContext } from "./mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
import { decodeExact } from "./replace.js";
import { sha256 } from "../fs/text.js";

type EditOp = "replace" | "insert_before" | "insert_after" | "delete";

export interface AnchoredEdit {
  op: EditOp;
  pos: string;
  end?: string;
  lines?: string[];
}

/** One edit in original line numbers: lines [from, to] replaced (to = from - 1 for a pure insertion). */
interface Span {
  index: number;
  op: EditOp;
  from: number;
  to: number;
  texts: string[];
}

interface Region {
  start_line: number;
  end_line: number;
  /** The region's lines as `N#ID|text`, ready for the next hash_edit. */
  anchors: string;
}

interface Shift {
  /** Original lines from this one on … */
  from_line: number;
  /** … are now at their old number plus this. */
  by: number;
}

export interface EditPlan {
  text: string;
  totalLines: number;
  regions: Region[];
  shifts: Shift[];
}

const CONTEXT = 2;

export function applyAnchoredEdits(text: string, edits: readonly AnchoredEdit[], rel: string): EditPlan {
  const lines = splitLines(text);
  if (lines.length === 0)
    throw new Refusal(
      `\`${rel}\` is empty, so it has no lines to anchor to; nothing was written.`,
      "Give it content with write_file.",
    );
  const spans = edits.map((e, i) => toSpan(e, i));
  checkAnchors(edits, lines, rel);
  refuseOverlaps(spans);
  return rebuild(lines, spans);
}

function toSpan(e: AnchoredEdit, i: number): Span {
  const at = `edits[${i}]`;
  const pos = parseAnchor(e.pos, `${at}.pos`);
  const end = e.end === undefined ? undefined : parseAnchor(e.end, `${at}.end`);
  if (end && (e.op === "insert_before" || e.op === "insert_after")) {
    throw new ToolError("EINVAL", `${at}.end is only for replace and delete; ${e.op} takes pos alone. Remove end.`);
  }
  if (end && end.line < pos.line)
    throw new ToolError("EINVAL", expected(`${at}.end`, `at or after pos (line ${pos.line})`, e.end));
  if (e.op === "delete" && e.lines !== undefined)
    throw new ToolError("EINVAL", `${at}.lines is not used by delete. Remove lines, or use replace.`);
  if (e.op !== "delete" && e.lines === undefined)
    throw new ToolError("EINVAL", `Missing \`${at}.lines\`: ${e.op} needs the new lines (an array of strings).`);
  const texts = splitNewLines(e.lines ?? []);
  if (e.op.startsWith("insert") && texts.length === 0)
    throw new ToolError("EINVAL", expected(`${at}.lines`, "at least one line for an insert", e.lines));
  if (looksAnchored(texts)) {
    throw new Refusal(
      `${at}.lines still carry the \`N#ID|\` prefix of an anchored read; nothing was written.`,
      "Pass the new text alone, without the `N#ID|` prefix.",
    );
  }
  const last = end?.line ?? pos.line;
  if (e.op === "insert_before") return { index: i, op: e.op, from: pos.line, to: pos.line - 1, texts };
  if (e.op === "insert_after") return { index: i, op: e.op, from: pos.line + 1, to: pos.line, texts };
  return { index: i, op: e.op, from: pos.line, to: last, texts };
}

/**
 * An element holding line breaks is several lines (a CR left by a CRLF break is dropped); one trailing
 * break ends the element's last line rather than adding an empty one.
 */
function splitNewLines(given: readonly string[]): string[] {
  const out: string[] = [];
  for (const g of given) {
    if (!g.includes("\n")) {
      out.push(g);
      continue;
    }
    const parts = g.split("\n").map((t) => t.replace(/\r$/, ""));
    if (parts[parts.length - 1] === "") parts.pop();
    for (const item of parts) out.push(item);
  }
  return out;
}

/** Every anchor is checked before anything changes; all stale ones are reported together. */
function checkAnchors(edits: readonly AnchoredEdit[], lines: readonly Line[], rel: string): void {
  const stale: StaleAnchor[] = [];
  edits.forEach((e, i) => {
    const anchors: [string, Anchor][] = [[`edits[${i}].pos`, parseAnchor(e.pos, `edits[${i}].pos`)]];
    if (e.end !== undefined) anchors.push([`edits[${i}].end`, parseAnchor(e.end, `edits[${i}].end`)]);
    for (const [field, anchor] of anchors) {
      const line = lines[anchor.line - 1];
      if (!line || lineId(line.text) !== anchor.id) stale.push({ field, anchor });
    }
  });
  if (stale.length) throw staleRefusal(rel, lines, stale);
}

function describe(s: Span): string {
  if (s.op === "insert_before") return `edits[${s.index}] (insert_before line ${s.from})`;
  if (s.op === "insert_after") return `edits[${s.index}] (insert_after line ${s.to})`;
  return `edits[${s.index}] (${s.op} line${s.to > s.from ? `s ${s.from}-${s.to}` : ` ${s.from}`})`;
}

/**
 * Two edits overlap when their line ranges share a line, when an insertion falls between two lines
 * of a replaced range, or when two insertions land at the same place (their order would be a guess).
 */
function refuseOverlaps(spans: readonly Span[]): void {
  const sorted = [...spans].sort((a, b) => a.from - b.from || a.to - b.to);
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i];
      const b = sorted[j];
      if (b.from > a.to + 1) break;
      if (overlaps(a, b)) {
        throw new Refusal(
          `${describe(a)} and ${describe(b)} overlap, so the result would depend on their order; nothing was written.`,
          "Merge them into one edit, or anchor them to lines that do not overlap.",
        );
      }
    }
  }
}

function overlaps(a: Span, b: Span): boolean {
  const aIns = a.to < a.from;
  const bIns = b.to < b.from;
  if (aIns && bIns) return a.from === b.from;
  if (aIns) return a.from > b.from && a.from <= b.to; // insertion point strictly inside b
  if (bIns) return b.from > a.from && b.from <= a.to;
  return a.from <= b.to && b.from <= a.to;
}

function rebuild(lines: readonly Line[], spans: readonly Span[]): EditPlan {
  const crlf = lines.filter((l) => l.eol === "\r\n").length;
  const eol = crlf > 0 && crlf * 2 >= lines.filter((l) => l.eol !== "").length ? "\r\n" : "\n"; // as usesCrlf decides
  const endsWithBreak = lines[lines.length - 1].eol !== "";
  const sorted = [...spans].sort((a, b) => a.from - b.from || a.to - b.to);
  const out: Line[] = [];
  const changed: { start: number; count: number }[] = [];
  const shifts: Shift[] = [];
  let next = 1; // the next original line to copy
  let delta = 0;
  for (const s of sorted) {
    while (next < s.from) out.push(lines[next++ - 1]);
    changed.push({ start: out.length + 1, count: s.texts.length });
    for (const t of s.texts) out.push({ text: t, eol });
    next = s.to + 1;
    const d = s.texts.length - (s.to - s.from + 1);
    if (d !== 0) {
      delta += d;
      shifts.push({ from_line: s.to + 1, by: delta });
    }
  }
  while (next <= lines.length) out.push(lines[next++ - 1]);
  // Every line but the last needs a break; the last keeps the file's own ending (or lack of one).
  for (let i = 0; i < out.length - 1; i++) if (out[i].eol === "") out[i] = { text: out[i].text, eol };
  if (out.length)
    out[out.length - 1] = { text: out[out.length - 1].text, eol: endsWithBreak ? out[out.length - 1].eol || eol : "" };
  const text = out.map((l) => l.text + l.eol).join("");
  return {
    text,
    totalLines: out.length,
    regions: regionsOf(out, changed),
    shifts: shifts.filter((s) => s.from_line <= lines.length),
  };
}

/** The changed lines with CONTEXT lines around them, windows merged where they touch. */
function regionsOf(out: readonly Line[], changed: readonly { start: number; count: number }[]): Region[] {
  const windows: [number, number][] = [];
  for (const c of changed) {
    // A deletion leaves no line: show the lines around the gap.
    const from = Math.max(1, c.start - CONTEXT);
    const to = Math.min(out.length, c.count ? c.start + c.count - 1 + CONTEXT : c.start - 1 + CONTEXT);
    const last = windows[windows.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else if (to >= from) windows.push([from, to]);
  }
  return windows.map(([from, to]) => ({
    start_line: from,
    end_line: to,
    anchors: formatAnchored(
      out.slice(from - 1, to).map((l) => l.text),
      from,
    ),
  }));
}

/**
 * Before the lock: check the anchors against the file as it is now. A stale anchor refuses the call
 * and quotes the current lines; that quote shows the session the current text of the lines it meant
 * to change, so it counts as a range read of this version and the retry needs no re-read. Only a
 * session that has read some version of the file is shown anything; the rest is left to mutate().
 */
export async function precheckAnchors(
  ctx: MutationContext,
  target: ResolvedPath,
  edits: readonly AnchoredEdit[],
): Promise<void> {
  const files = ctx.files ?? LOCAL_FILES;
  if (!ctx.ledger.readAnyVersion(ctx.session, target.abs)) return;
  const bytes = files.kind === "local" ? await readForCheck(target) : await files.read(target, NO_SIGNAL);
  if (bytes === null) return; // mutate() reports a missing file, a link or a folder under the lock
  try {
    applyAnchoredEdits(decodeExact(bytes, target), edits, target.rel);
  } catch (err) {
    if (err instanceof StaleAnchors) ctx.ledger.record(ctx.session, target.abs, sha256(bytes), "range");
    throw err;
  }
}

const NO_SIGNAL = new AbortController().signal;

/** The file's bytes for the anchor check, or null where mutate() will refuse it with the reason. */
async function readForCheck(target: ResolvedPath): Promise<Buffer | null> {
  let cur;
  try {
    cur = await openCurrent(target); // through the walk (beneath.ts), like every read
  } catch {
    return null; // a folder, a link, a changed folder: mutate() refuses it with the reason
  }
  if (cur === null) return null;
  try {
    return await cur.fh.readFile();
  } finally {
    await cur.fh.close();
  }
}
