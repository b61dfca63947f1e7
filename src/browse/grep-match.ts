// What the JS grep engine does to one file: pick a matcher for the query, read the file whole, and
// turn its matching lines into a FileBuilder's events. Pure and synchronous, so the same code runs
// in-process (literal searches) and in the regex worker (grep-worker.ts), where a runaway pattern
// can be stopped.
import { fstatSync, readSync } from "node:fs";
import { ToolError, expected } from "../errors.js";
import { escapeRegex } from "../fs/glob.js";
import { countNewlines } from "../fs/text.js";
import { FileBuilder, type FileHits, type GrepQuery } from "./grep-collect.js";
import {
  byteSpans,
  emitGroups,
  groupSpans,
  lineStarts,
  multilineSource,
  regexSpans,
  type Group,
} from "./grep-multiline.js";
import { requiredLiteral } from "./regex-literal.js";

/**
 * How a file is searched: raw bytes for a case-sensitive literal; otherwise a RegExp over the text,
 * decoded as latin1 (offsets = bytes) for an ASCII literal, or as UTF-8. `prefilter` is a literal
 * every match must contain: files without it are skipped before decoding.
 */
export type Matcher = (
  | { kind: "bytes"; needle: Buffer }
  | { kind: "regex"; re: RegExp; lineRe: RegExp; encoding: "latin1" | "utf8"; prefilter?: Buffer }
) & {
  /** Matches may cross lines (grep's multiline): `re` alone finds them over the whole text. */
  multiline: boolean;
};

export function makeMatcher(q: GrepQuery): Matcher {
  const multiline = q.multiline === true;
  if (!q.regex && q.caseSensitive) return { kind: "bytes", needle: Buffer.from(q.pattern, "utf8"), multiline };
  const fold = q.caseSensitive ? "" : "i";
  // Multiline: one scan of the whole text finds the matches, with rg's `.`, `^` and `$` (no m or s flag).
  const whole = multiline ? "g" : "gms";
  if (!q.regex && /^[\x20-\x7e\n]*$/.test(q.pattern)) {
    // ASCII, case-insensitive: latin1 text keeps offsets in bytes and folds only ASCII, as needed.
    const source = escapeRegex(q.pattern);
    return {
      kind: "regex",
      re: new RegExp(source, whole + fold),
      lineRe: new RegExp(source, "s" + fold),
      encoding: "latin1",
      multiline,
    };
  }
  const source = q.regex ? (multiline ? multilineSource(q.pattern) : q.pattern) : escapeRegex(q.pattern);
  const literal = q.regex && q.caseSensitive ? requiredLiteral(q.pattern) : undefined;
  const prefilter = literal === undefined ? undefined : Buffer.from(literal, "utf8");
  const unicode = compiles(source, "u") ? "u" : "";
  if (unicode === "" && !compiles(source, "")) {
    throw new ToolError("EINVAL", expected("pattern", "a valid regular expression", q.pattern));
  }
  return {
    kind: "regex",
    re: new RegExp(source, whole + fold + unicode),
    lineRe: new RegExp(source, "s" + fold + unicode),
    encoding: "utf8",
    prefilter,
    multiline,
  };
}

/** Whether JS accepts the pattern with these flags (Unicode mode is stricter; rg's syntax is closer to it). */
function compiles(source: string, flags: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false; // a SyntaxError is the answer here, not a failure
  }
}

/** A matching line: its byte span in the file and the match's offset in it. */
interface Hit {
  start: number;
  end: number;
  matchAt: number;
}

function byteHits(buf: Buffer, needle: Buffer): Hit[] {
  const hits: Hit[] = [];
  let pos = 0;
  let i: number;
  while ((i = buf.indexOf(needle, pos)) !== -1) {
    const start = i === 0 ? 0 : buf.lastIndexOf(10, i - 1) + 1;
    let end = buf.indexOf(10, i + Math.max(needle.length, 1) - 1);
    if (end === -1) end = buf.length;
    hits.push({ start, end, matchAt: i });
    pos = end + 1;
    if (pos >= buf.length) break;
  }
  return hits;
}

/**
 * Regex hits over the decoded text (offsets in characters). The whole-text scan (flags `gms`) only
 * finds candidate lines, a superset of rg's; each candidate is then settled by the line alone,
 * without its "\n" (a "\r" stays, as in rg), where `^`, `$` and `.` mean what they mean to rg.
 */
function regexHits(text: string, re: RegExp, lineRe: RegExp): Hit[] {
  const hits: Hit[] = [];
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const i = m.index;
    // After a final newline there is no line (rg counts none), only an empty match position.
    if (i === text.length && (i === 0 || text[i - 1] === "\n")) break;
    const start = i === 0 ? 0 : text.lastIndexOf("\n", i - 1) + 1;
    let end = text.indexOf("\n", i);
    if (end === -1) end = text.length;
    const lm = lineRe.exec(text.slice(start, end));
    if (lm) hits.push({ start, end, matchAt: start + lm.index });
    if (end >= text.length) break;
    re.lastIndex = end + 1;
  }
  return hits;
}

/** Search one file's bytes into `builder`. Returns "binary" for a file with a NUL that matched. */
function searchBuffer(buf: Buffer, matcher: Matcher, context: number, builder: FileBuilder): "ok" | "binary" {
  if (matcher.kind === "regex" && matcher.prefilter && buf.indexOf(matcher.prefilter) === -1) return "ok";
  const binary = buf.indexOf(0) !== -1;
  // Offsets are in bytes (raw or latin1) or in UTF-16 units of the decoded text.
  const data: Buffer | string = matcher.kind === "regex" && matcher.encoding === "utf8" ? buf.toString("utf8") : buf;
  const text = () => (matcher.kind === "regex" && matcher.encoding === "latin1" ? buf.toString("latin1") : data);
  if (matcher.multiline) {
    const spans = matcher.kind === "bytes" ? byteSpans(buf, matcher.needle) : regexSpans(text() as string, matcher.re);
    if (spans.length === 0) return "ok";
    const starts = lineStarts(data);
    const groups = groupSpans(data, starts, spans);
    if (groups.length === 0) return "ok";
    if (binary) return "binary";
    emitGroups(data, groups, context, builder, starts);
    return "ok";
  }
  const hits =
    matcher.kind === "bytes" ? byteHits(buf, matcher.needle) : regexHits(text() as string, matcher.re, matcher.lineRe);
  if (hits.length === 0) return "ok";
  if (binary) return "binary";
  let line = 1;
  let counted = 0;
  const groups: Group[] = hits.map((h) => {
    line += countNewlines(data, counted, h.start);
    counted = h.start;
    return { n: line, last: line, start: h.start, end: h.end, at: h.matchAt };
  });
  emitGroups(data, groups, context, builder);
  return "ok";
}

/**
 * The whole file behind `fd` (opened by the caller through the walk's folder descriptor, which it
 * closes), or undefined when it is no regular file with one link: a FIFO swapped in must not block,
 * and a hard link made earlier to a file outside would read that file from here (as read_file refuses).
 */
function readWhole(fd: number, scratch: Buffer): Buffer | undefined {
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink > 1) return undefined;
  let buf = scratch;
  let n = readSync(fd, buf, 0, buf.length, 0);
  if (n === buf.length) {
    // Larger than the scratch buffer: size it to the file and read the rest.
    buf = Buffer.allocUnsafe(Math.max(st.size, n) + 1);
    scratch.copy(buf, 0, 0, n);
    let r: number;
    while ((r = readSync(fd, buf, n, buf.length - n, n)) > 0) {
      n += r;
      if (n === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
    }
  }
  return buf.subarray(0, n);
}

/** One file searched: its hits, or "binary" for a file with a NUL that matched; undefined when unreadable or no match. */
export interface FileResult {
  hits: FileHits;
  kind: "ok" | "binary";
}

/** Search the file open at `fd` (the caller opened it through the walk, and closes it). */
export function searchFile(
  fd: number,
  rel: string,
  room: number,
  matcher: Matcher,
  query: GrepQuery,
  scratch: Buffer,
): FileResult | undefined {
  const buf = readWhole(fd, scratch);
  if (!buf) return undefined;
  const builder = new FileBuilder(rel, room, query.context, query);
  const kind = searchBuffer(buf, matcher, query.context, builder);
  const hits = builder.finish();
  if (kind === "ok" && hits.matches === 0) return undefined;
  return { hits, kind };
}
