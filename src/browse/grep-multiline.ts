// grep's matches as both engines report them: spans of a file's text turned into FileBuilder events,
// each match with the lines it covers. In multiline mode (rg -U) a match may cross lines; matches
// that share a line are one entry (as a line with two matches is one line), and one that crosses
// lines reports its first line number and all its lines. rg joins matches on adjacent lines into one
// event; its submatches are split here by the same rule, so both engines give the same entries.
import type { FileBuilder } from "./grep-collect.js";

/** A match: [start, end) in the text (bytes of a Buffer, UTF-16 units of a string). */
export interface Span {
  start: number;
  end: number;
}

/** One entry: lines `n`..`last`, the text from `start` (line n's start) to `end` (line last's end, before "\n"). */
export interface Group {
  n: number;
  last: number;
  start: number;
  end: number;
  /** Where the first match starts. */
  at: number;
}

export type Text = Buffer | string;

export function lineStarts(data: Text): number[] {
  const starts = [0];
  let i = -1;
  if (typeof data === "string") while ((i = data.indexOf("\n", i + 1)) !== -1) starts.push(i + 1);
  else while ((i = data.indexOf(10, i + 1)) !== -1) starts.push(i + 1);
  return starts;
}

/** The 0-based index of the line holding `offset`. */
function lineIndex(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Matches grouped by the lines they cover, numbered from `firstLine`. An empty match after the final
 * newline is on no line (rg reports none there).
 */
export function groupSpans(data: Text, starts: number[], spans: Span[], firstLine = 1): Group[] {
  const groups: Group[] = [];
  const len = data.length;
  const lineEnd = (k: number) => (k + 1 < starts.length ? starts[k + 1] - 1 : len);
  for (const s of spans) {
    if (s.start === s.end && s.start === len && (len === 0 || starts[starts.length - 1] === len)) continue;
    const first = lineIndex(starts, s.start);
    const last = s.end > s.start ? lineIndex(starts, s.end - 1) : first;
    const prev = groups[groups.length - 1];
    if (prev && first + firstLine <= prev.last) {
      prev.last = Math.max(prev.last, last + firstLine);
      prev.end = lineEnd(last);
      continue;
    }
    groups.push({
      n: first + firstLine,
      last: last + firstLine,
      start: starts[first],
      end: lineEnd(last),
      at: s.start,
    });
  }
  return groups;
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/**
 * The text of lines [s, e) without their line ends, joined by "\n": a CR goes only with the "\n" after
 * it (a last line without "\n" keeps a final CR, as rg shows it).
 */
function textOf(data: Text, s: number, e: number): string {
  const t = typeof data === "string" ? data.slice(s, e) : data.toString("utf8", s, e);
  const ended = e < data.length;
  if (!t.includes("\n")) return ended ? stripCr(t) : t;
  const parts = t.split("\n");
  return parts.map((p, i) => (i < parts.length - 1 || ended ? stripCr(p) : p)).join("\n");
}

/** Where a match starts, in characters from its line's start. */
function colOf(data: Text, g: Group): number {
  return typeof data === "string" ? g.at - g.start : data.toString("utf8", g.start, g.at).length;
}

/** Feed the groups to `builder`, with `context` lines around them (0: none, as for rg's own context events). */
export function emitGroups(
  data: Text,
  groups: Group[],
  context: number,
  builder: FileBuilder,
  starts?: number[],
): void {
  if (context === 0) {
    for (const g of groups) builder.match(g.n, textOf(data, g.start, g.end), colOf(data, g));
    return;
  }
  starts ??= lineStarts(data);
  const lineText = (n: number) => textOf(data, starts[n - 1], (starts[n] ?? data.length + 1) - 1);
  const total = starts.length - (starts[starts.length - 1] === data.length ? 1 : 0);
  let next = 1;
  for (let k = 0; k < groups.length; k++) {
    const g = groups[k];
    for (let c = Math.max(next, g.n - context); c < g.n; c++) builder.contextLine(c, lineText(c));
    builder.match(g.n, textOf(data, g.start, g.end), colOf(data, g));
    next = g.last + 1;
    const upTo = Math.min(total, g.last + context, (groups[k + 1]?.n ?? Infinity) - 1);
    for (let c = next; c <= upTo; c++) builder.contextLine(c, lineText(c));
    next = Math.max(next, upTo + 1);
  }
}

/**
 * A pattern for JS that means what it means to rg in multiline mode: `.` any character but "\n"
 * (JS's also stops at "\r", U+2028, U+2029), `^` and `$` at the text's ends and next to "\n" only.
 * Character classes and escapes are left as they are.
 */
export function multilineSource(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      out += c + (pattern[i + 1] ?? "");
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
    } else if (c === ".") out += "[^\\n]";
    else if (c === "^") out += "(?<![^\\n])";
    else if (c === "$") out += "(?![^\\n])";
    else out += c;
  }
  return out;
}

/** Every match of `re` (flag g) in `text`, as rg's iteration gives them: an empty match right where the previous one ended is skipped. */
export function regexSpans(text: string, re: RegExp): Span[] {
  const spans: Span[] = [];
  re.lastIndex = 0;
  let lastEnd = -1;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const start = m.index;
    const end = start + m[0].length;
    if (end === start) {
      re.lastIndex = start + (re.unicode && (text.codePointAt(start) ?? 0) > 0xffff ? 2 : 1);
      if (start === lastEnd) continue;
    }
    spans.push({ start, end });
    lastEnd = end;
    if (start >= text.length) break;
  }
  return spans;
}

/** Every occurrence of `needle` in `buf`, left to right, not overlapping. */
export function byteSpans(buf: Buffer, needle: Buffer): Span[] {
  const spans: Span[] = [];
  let pos = 0;
  let i: number;
  while ((i = buf.indexOf(needle, pos)) !== -1) {
    spans.push({ start: i, end: i + needle.length });
    pos = i + Math.max(needle.length, 1);
  }
  return spans;
}
