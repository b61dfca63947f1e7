// What both grep engines feed: per-file line events (context before, match, context after, in line
// order, as rg emits them), kept up to the match cap and counted past it. Formatting lives here too,
// so the two engines can only differ in what they find, never in how it is shown.
import { showName } from "../fs/names.js";
import { comparePaths } from "./walk.js";

export interface GrepQuery {
  pattern: string;
  regex: boolean;
  caseSensitive: boolean;
  include?: string;
  context: number;
  startLine?: number;
  endLine?: number;
  /** Matches may cross lines (rg -U); a match's entry then holds all its lines. */
  multiline?: boolean;
}

export interface GrepLine {
  n: number;
  text: string;
  match: boolean;
  /** Character offset of the first match in `text` (matches only). */
  col: number;
  /** A match across lines (multiline): its last line; `text` holds lines n..last joined by "\n". */
  last?: number;
}

/** The last line an entry covers. */
function lastLine(l: GrepLine): number {
  return l.last ?? l.n;
}

export interface FileHits {
  path: string;
  lines: GrepLine[];
  /** Matching lines in the file (within the line range), shown or not. */
  matches: number;
}

/** Counting stops (and rg is stopped) once this many times the cap have matched. */
const COUNT_PAST_CAP = 10;

export class GrepCollector {
  private readonly kept: FileHits[] = [];
  /** Whether `kept` may be out of path order (path order only): files are appended, sorted when needed. */
  private unsorted = false;
  /** Matching lines held, before any pending cut to the cap (at or past the cap exactly when `stored` is). */
  private held = 0;
  total = 0;
  binarySkipped = 0;
  filesMatched = 0;
  /** Entries the visibility rule left out: neither searched nor named. */
  hidden = 0;
  /** True when the search stopped before the end, so `total` is a lower bound. */
  stopped = false;
  constructor(
    readonly maxMatches: number,
    private readonly context = 0,
    /**
     * Keep the first matches by path rather than by arrival: rg finishes files out of order, so a
     * later file may displace kept lines of a file that sorts after it. A search that runs to the end
     * then holds the first matches in path order, as a walk in path order would.
     */
    private readonly pathOrder = false,
  ) {}

  /** The files kept, with their lines (in path order when the collector keeps path order). */
  get files(): FileHits[] {
    this.trim();
    return this.kept;
  }

  /** Matching lines kept (at most the cap). */
  get stored(): number {
    this.trim();
    return this.held;
  }

  /** How many matching lines of the next file may be kept (by path order: any file may displace others). */
  room(): number {
    return this.pathOrder ? this.maxMatches : Math.max(0, this.maxMatches - this.held);
  }

  /** Files may finish out of order (parallel reads), so the cap is applied here, on arrival. */
  add(hits: FileHits): void {
    this.total += hits.matches;
    if (hits.matches > 0) this.filesMatched++;
    if (!this.pathOrder) {
      const kept = this.keep(hits, this.room());
      this.held += kept.count;
      if (kept.count > 0) this.kept.push(kept.file);
      return;
    }
    const kept = this.keep(hits, this.maxMatches);
    if (kept.count === 0) return;
    // rg's parallel walk delivers files far from path order, so placing each on arrival cost O(files²)
    // path comparisons (~120 ms for 3,000 files). Append instead, and sort and cut to the cap only once
    // twice the cap is held (each sort is paid for by a cap's worth of new matches) and at the end.
    this.kept.push(kept.file);
    this.unsorted = true;
    this.held += kept.count;
    if (this.held >= 2 * this.maxMatches) this.trim();
  }

  /** Path order, then the files that sort last give up their last matches until the cap holds. */
  private trim(): void {
    if (!this.pathOrder) return;
    if (this.unsorted) this.kept.sort((a, b) => comparePaths(a.path, b.path));
    this.unsorted = false;
    while (this.held > this.maxMatches) {
      const last = this.kept[this.kept.length - 1];
      const has = last.lines.filter((l) => l.match).length;
      const keepN = Math.max(0, has - (this.held - this.maxMatches));
      this.held -= has - keepN;
      if (keepN === 0) this.kept.pop();
      else this.kept[this.kept.length - 1] = this.keep(last, keepN).file;
    }
  }

  /** The file's first `room` matching lines, with their context. */
  private keep(hits: FileHits, room: number): { file: FileHits; count: number } {
    // Nearly always the file fits as it is (a FileBuilder keeps no more than its room, and no context
    // past its last match's): no copy then.
    let has = 0;
    let last = -Infinity;
    for (const l of hits.lines)
      if (l.match) {
        has++;
        last = lastLine(l);
      }
    const tail = hits.lines.length === 0 ? last : hits.lines[hits.lines.length - 1].n;
    if (has <= room && tail <= last + this.context) return { file: hits, count: has };
    let kept = 0;
    let lastMatch = -Infinity;
    let end = hits.lines.length;
    for (let i = 0; i < hits.lines.length; i++) {
      const l = hits.lines[i];
      if (!l.match) continue;
      if (kept === room) {
        end = i;
        break;
      }
      kept++;
      lastMatch = lastLine(l);
    }
    const lines = hits.lines.slice(0, end).filter((l) => l.match || l.n <= lastMatch + this.context || l.n < lastMatch);
    return { file: { ...hits, lines }, count: kept };
  }

  /** Whether the engine may stop now: the cap is full and enough past it has been counted. */
  enough(): boolean {
    return this.held >= this.maxMatches && this.countedEnough(this.total);
  }

  /** Whether `found` matches are as many as counting goes (checks of their files may be pending). */
  countedEnough(found: number): boolean {
    return found >= this.maxMatches * COUNT_PAST_CAP;
  }
}

/** Builds one file's hits from the event stream, keeping at most `room` matching lines. */
export class FileBuilder {
  readonly lines: GrepLine[] = [];
  matches = 0;
  private kept = 0;
  private lastMatch = -Infinity;
  private lastEmitted = -Infinity;
  private before: GrepLine[] = [];
  constructor(
    readonly path: string,
    private readonly room: number,
    private readonly context: number,
    private readonly q: GrepQuery,
  ) {}

  private inRange(n: number): boolean {
    return (
      (this.q.startLine === undefined || n >= this.q.startLine) && (this.q.endLine === undefined || n <= this.q.endLine)
    );
  }

  match(n: number, text: string, col: number): void {
    if (!this.inRange(n)) return;
    this.matches++;
    if (this.kept >= this.room) {
      // Past the room nothing more is shown, not even the kept match's trailing context (as keep() cuts).
      this.lastMatch = -Infinity;
      return;
    }
    const last = text.includes("\n") ? n + text.split("\n").length - 1 : n;
    const line: GrepLine = last > n ? { n, text, match: true, col, last } : { n, text, match: true, col };
    for (const l of this.before) if (l.n > this.lastEmitted) this.lines.push(l);
    this.lines.push(line);
    this.before = [];
    this.kept++;
    this.lastMatch = last;
    this.lastEmitted = last;
  }

  contextLine(n: number, text: string): void {
    if (this.context === 0 || !this.inRange(n)) return;
    const line = { n, text, match: false, col: 0 };
    if (n <= this.lastMatch + this.context) {
      if (n > this.lastEmitted) this.lines.push(line);
      this.lastEmitted = Math.max(this.lastEmitted, n);
      return;
    }
    if (this.kept >= this.room) return;
    this.before.push(line);
    if (this.before.length > this.context) this.before.shift();
  }

  finish(): FileHits {
    return { path: this.path, lines: this.lines, matches: this.matches };
  }
}

/** Longest line shown; longer ones are cut around their first match, with a marker. */
const LINE_WIDTH = 300;

function cutLine(text: string, col: number): string {
  if (text.length <= LINE_WIDTH) return text;
  const start = Math.max(0, Math.min(col - 60, text.length - LINE_WIDTH));
  const end = start + LINE_WIDTH;
  const head = start > 0 ? `[… ${start} chars cut] ` : "";
  const tail = end < text.length ? ` [… ${text.length - end} chars cut]` : "";
  return head + text.slice(start, end) + tail;
}

export interface GrepOutput {
  text: string;
  shown: number;
  /** Set when the output byte limit cut the listing short. */
  cutByBytes: boolean;
}

/** The listing: `path:N: text` for a folder, `N: text` for one file; context lines use `-`. */
export function formatHits(files: FileHits[], oneFile: boolean, context: number, maxBytes: number): GrepOutput {
  const sorted = [...files].sort((a, b) => comparePaths(a.path, b.path));
  const out: string[] = [];
  // A UTF-16 unit is at most 3 UTF-8 bytes: while 3× the characters fit, the exact size is not needed.
  let bytes = 0;
  let exact = false;
  let shown = 0;
  for (const f of sorted) {
    let prev = -1;
    const name = oneFile ? "" : showName(f.path);
    for (const l of f.lines) {
      const sep = l.match ? ":" : "-";
      // A match across lines shows each of its lines, numbered, as rg prints them; it counts once.
      const texts = l.last === undefined ? [l.text] : l.text.split("\n");
      for (let i = 0; i < texts.length; i++) {
        const n = l.n + i;
        const prefix = oneFile ? `${n}${sep} ` : `${name}${sep}${n}${sep} `;
        const gap = context > 0 && prev !== -1 && n > prev + 1 ? "--\n" : "";
        const line = gap + prefix + cutLine(texts[i], i === 0 ? l.col : 0);
        if (!exact && bytes + 3 * (line.length + 1) > maxBytes) {
          bytes = out.reduce((sum, o) => sum + Buffer.byteLength(o) + 1, 0);
          exact = true;
        }
        const size = exact ? Buffer.byteLength(line) + 1 : 3 * (line.length + 1);
        if (bytes + size > maxBytes) return { text: out.join("\n"), shown, cutByBytes: true };
        out.push(line);
        bytes += size;
        prev = n;
        if (l.match && i === 0) shown++;
      }
    }
  }
  return { text: out.join("\n"), shown, cutByBytes: false };
}

/** Strip the line terminator rg and the JS engine both leave on a line. */
export function stripEol(s: string): string {
  if (s.endsWith("\r\n")) return s.slice(0, -2);
  if (s.endsWith("\n")) return s.slice(0, -1);
  return s;
}
