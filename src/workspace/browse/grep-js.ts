// The JS grep engine: the same walk, filters and event stream as rg, in-process. Used when rg is
// missing or LATCH_GREP_ENGINE=js. Literal case-sensitive search works on raw bytes (no decoding of
// files that do not match); everything else runs a RegExp per file with one-line semantics, like rg.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { ToolError, errnoCode, expected } from "../../errors.js";
import { FileBuilder, type GrepQuery } from "./grep-collect.js";
import type { EngineRun } from "./grep-rg.js";
import { requiredLiteral } from "./regex-literal.js";
import { cancelled, walk } from "./walk.js";

/** The engine reads files synchronously into one reused buffer, and yields to the event loop this often (ms). */
const YIELD_EVERY_MS = 15;
const BUFFER_BYTES = 1 << 20;
/** Matching files whose resolver check may be pending at once (their hits are held meanwhile). */
const MAX_IN_FLIGHT = 256;

/**
 * How a file is searched: raw bytes for a case-sensitive literal; otherwise a RegExp over the text,
 * decoded as latin1 (offsets = bytes) for an ASCII literal, or as UTF-8. `prefilter` is a literal
 * every match must contain: files without it are skipped before decoding.
 */
type Matcher =
  | { kind: "bytes"; needle: Buffer }
  | { kind: "regex"; re: RegExp; lineRe: RegExp; encoding: "latin1" | "utf8"; prefilter?: Buffer };

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function makeMatcher(q: GrepQuery): Matcher {
  if (!q.regex && q.caseSensitive) return { kind: "bytes", needle: Buffer.from(q.pattern, "utf8") };
  const fold = q.caseSensitive ? "" : "i";
  if (!q.regex && /^[\x20-\x7e]*$/.test(q.pattern)) {
    // ASCII, case-insensitive: latin1 text keeps offsets in bytes and folds only ASCII, as needed.
    const source = escapeRegex(q.pattern);
    return {
      kind: "regex",
      re: new RegExp(source, "gms" + fold),
      lineRe: new RegExp(source, "s" + fold),
      encoding: "latin1",
    };
  }
  const source = q.regex ? q.pattern : escapeRegex(q.pattern);
  const literal = q.regex && q.caseSensitive ? requiredLiteral(q.pattern) : undefined;
  const prefilter = literal === undefined ? undefined : Buffer.from(literal, "utf8");
  const unicode = compiles(source, "u") ? "u" : "";
  if (unicode === "" && !compiles(source, "")) {
    throw new ToolError("EINVAL", expected("pattern", "a valid regular expression", q.pattern));
  }
  return {
    kind: "regex",
    re: new RegExp(source, "gms" + fold + unicode),
    lineRe: new RegExp(source, "s" + fold + unicode),
    encoding: "utf8",
    prefilter,
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

function countNewlines(data: Buffer | string, from: number, to: number): number {
  let n = 0;
  let i = from - 1;
  if (typeof data === "string") while ((i = data.indexOf("\n", i + 1)) !== -1 && i < to) n++;
  else while ((i = data.indexOf(10, i + 1)) !== -1 && i < to) n++;
  return n;
}

/** Search one file's bytes into `builder`. Returns "binary" for a file with a NUL that matched. */
export function searchBuffer(buf: Buffer, matcher: Matcher, context: number, builder: FileBuilder): "ok" | "binary" {
  if (matcher.kind === "regex" && matcher.prefilter && buf.indexOf(matcher.prefilter) === -1) return "ok";
  const binary = buf.indexOf(0) !== -1;
  // Offsets are in bytes (raw or latin1) or in UTF-16 units of the decoded text.
  const data: Buffer | string = matcher.kind === "regex" && matcher.encoding === "utf8" ? buf.toString("utf8") : buf;
  const hits =
    matcher.kind === "bytes"
      ? byteHits(buf, matcher.needle)
      : regexHits(
          matcher.encoding === "latin1" ? buf.toString("latin1") : (data as string),
          matcher.re,
          matcher.lineRe,
        );
  if (hits.length === 0) return "ok";
  if (binary) return "binary";
  const slice = (s: number, e: number) =>
    stripCr(typeof data === "string" ? data.slice(s, e) : data.toString("utf8", s, e));
  const col = (h: Hit) =>
    typeof data === "string" ? h.matchAt - h.start : data.toString("utf8", h.start, h.matchAt).length;
  let line = 1;
  let counted = 0;
  const numbered = hits.map((h) => {
    line += countNewlines(data, counted, h.start);
    counted = h.start;
    return { h, n: line };
  });
  if (context === 0) {
    for (const { h, n } of numbered) builder.match(n, slice(h.start, h.end), col(h));
    return "ok";
  }
  // With context: index the line starts once, then walk the merged windows in line order.
  const starts = lineStarts(data);
  const lineText = (n: number) => slice(starts[n - 1], (starts[n] ?? data.length + 1) - 1);
  const total = starts.length - (starts[starts.length - 1] === data.length ? 1 : 0);
  let next = 1;
  for (let k = 0; k < numbered.length; k++) {
    const { h, n } = numbered[k];
    for (let c = Math.max(next, n - context); c < n; c++) builder.contextLine(c, lineText(c));
    builder.match(n, slice(h.start, h.end), col(h));
    next = n + 1;
    const upTo = Math.min(total, n + context, (numbered[k + 1]?.n ?? Infinity) - 1);
    for (let c = next; c <= upTo; c++) builder.contextLine(c, lineText(c));
    next = Math.max(next, upTo + 1);
  }
  return "ok";
}

function lineStarts(data: Buffer | string): number[] {
  const starts = [0];
  let i = -1;
  if (typeof data === "string") while ((i = data.indexOf("\n", i + 1)) !== -1) starts.push(i + 1);
  else while ((i = data.indexOf(10, i + 1)) !== -1) starts.push(i + 1);
  return starts;
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

function readWhole(abs: string, scratch: Buffer): Buffer | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: a file swapped for a pipe since the walk must not block the host.
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "EACCES" || code === "ELOOP" || code === "EISDIR" || code === "ENXIO")
      return undefined; // as rg: skipped quietly
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    let buf = scratch;
    let n = readSync(fd, buf, 0, buf.length, 0);
    if (n === buf.length) {
      // Larger than the scratch buffer: size it to the file and read the rest.
      const size = fstatSync(fd).size;
      buf = Buffer.allocUnsafe(Math.max(size, n) + 1);
      scratch.copy(buf, 0, 0, n);
      let r: number;
      while ((r = readSync(fd, buf, n, buf.length - n, n)) > 0) {
        n += r;
        if (n === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
      }
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export async function runJs(
  run: EngineRun,
  deniedSubstrings: readonly string[],
  allowDir: (rel: string) => Promise<boolean>,
): Promise<void> {
  const { target, query, collector } = run;
  const matcher = makeMatcher(query);
  run.onStart();
  const scratch = Buffer.allocUnsafe(BUFFER_BYTES);
  // Reads are synchronous (a cached small file costs a few syscalls, far less than a thread-pool
  // round trip); the loop yields every few milliseconds so the host stays responsive and aborts land.
  let lastYield = performance.now();
  // The resolver checks of matching files run side by side with the search; verdicts apply in order.
  let applied: Promise<void> = Promise.resolve();
  let inFlight = 0;
  /** Matches found, before their files' checks: what lets the walk stop without waiting for them. */
  let tentative = 0;
  const searchOne = (abs: string, rel: string): void => {
    const buf = readWhole(abs, scratch);
    if (!buf) return;
    const builder = new FileBuilder(rel, collector.room(), query.context, query);
    const kind = searchBuffer(buf, matcher, query.context, builder);
    const hits = builder.finish();
    if (kind === "ok" && hits.matches === 0) return;
    tentative += hits.matches;
    const shown = run.visible(rel);
    inFlight++;
    applied = applied.then(async () => {
      const ok = await shown;
      inFlight--;
      if (!ok) return;
      if (kind === "binary") collector.binarySkipped++;
      else collector.add(hits);
    });
    applied.catch(() => undefined); // a failure surfaces at `await applied`, not as an unhandled rejection
  };
  if (target.isFile) {
    searchOne(target.abs, target.rel);
    await applied;
    if (run.signal.aborted) throw cancelled();
    return;
  }
  const prefix = target.rel === "." ? "" : target.rel + "/";
  let files = 0;
  for await (const e of walk({ root: run.root, start: target, deniedSubstrings, allowDir, signal: run.signal })) {
    if (e.kind !== "file" || !run.includes(e.rel.slice(prefix.length))) continue;
    searchOne(e.abs, e.rel);
    if (++files % 2000 === 0) run.progress(files);
    if (inFlight > MAX_IN_FLIGHT) await applied;
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      lastYield = performance.now();
    }
    if (run.signal.aborted) break;
    if (collector.enough() || collector.countedEnough(tentative)) {
      collector.stopped = true;
      break;
    }
  }
  await applied;
  if (run.signal.aborted) throw cancelled();
}
