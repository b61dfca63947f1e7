// The JS grep engine: the same walk, filters and event stream as rg, in-process. Used when rg is
// missing or LATCH_GREP_ENGINE=js. Literal case-sensitive search works on raw bytes (no decoding of
// files that do not match); everything else runs a RegExp per file with one-line semantics, like rg.
import { readFile } from "node:fs/promises";
import { ToolError, errnoCode, expected } from "../../errors.js";
import { FileBuilder, type GrepQuery } from "./grep-collect.js";
import type { EngineRun } from "./grep-rg.js";
import { cancelled, walk } from "./walk.js";

/** Files read at once: enough to keep the thread pool busy on two cores. */
const PARALLEL = 8;

type Matcher = { kind: "bytes"; needle: Buffer } | { kind: "regex"; re: RegExp };

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function makeMatcher(q: GrepQuery): Matcher {
  if (!q.regex && q.caseSensitive) return { kind: "bytes", needle: Buffer.from(q.pattern, "utf8") };
  const source = q.regex ? q.pattern : escapeRegex(q.pattern);
  const flags = "gm" + (q.caseSensitive ? "" : "i");
  try {
    return { kind: "regex", re: new RegExp(source, flags + "u") };
  } catch {
    try {
      return { kind: "regex", re: new RegExp(source, flags) };
    } catch (err) {
      throw new ToolError("EINVAL", expected("pattern", "a valid regular expression", q.pattern) + `: ${(err as Error).message}`);
    }
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

/** Regex hits over the decoded text (offsets in characters). A match may not cross a line break. */
function regexHits(text: string, re: RegExp): Hit[] {
  const hits: Hit[] = [];
  const one = new RegExp(re.source, re.flags.replace("g", ""));
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const i = m.index;
    const start = i === 0 ? 0 : text.lastIndexOf("\n", i - 1) + 1;
    let end = text.indexOf("\n", i);
    if (end === -1) end = text.length;
    if (i + m[0].length <= end || m[0].indexOf("\n") === -1) {
      hits.push({ start, end, matchAt: i });
    } else {
      // The match ran past the line's end: test this line alone, as rg would.
      const lm = one.exec(text.slice(start, end));
      if (lm) hits.push({ start, end, matchAt: start + lm.index });
    }
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
  const binary = buf.indexOf(0) !== -1;
  const data: Buffer | string = matcher.kind === "bytes" ? buf : buf.toString("utf8");
  const hits = matcher.kind === "bytes" ? byteHits(buf, matcher.needle) : regexHits(data as string, matcher.re);
  if (hits.length === 0) return "ok";
  if (binary) return "binary";
  const slice = (s: number, e: number) => stripCr(typeof data === "string" ? data.slice(s, e) : data.toString("utf8", s, e));
  const col = (h: Hit) => (typeof data === "string" ? h.matchAt - h.start : data.toString("utf8", h.start, h.matchAt).length);
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

export async function runJs(run: EngineRun, deniedSubstrings: readonly string[], allowDir: (rel: string) => Promise<boolean>): Promise<void> {
  const { target, query, collector } = run;
  const matcher = makeMatcher(query);
  run.onStart();
  const searchOne = async (abs: string, rel: string): Promise<void> => {
    let buf: Buffer;
    try {
      buf = await readFile(abs);
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") return; // as rg: skipped quietly
      throw err;
    }
    if (collector.enough() || run.signal.aborted) return;
    const builder = new FileBuilder(rel, collector.room(), query.context, query);
    const kind = searchBuffer(buf, matcher, query.context, builder);
    const hits = builder.finish();
    if ((kind === "ok" && hits.matches === 0) || !(await run.visible(rel))) return;
    if (kind === "binary") collector.binarySkipped++;
    else collector.add(hits);
  };
  if (target.isFile) {
    await searchOne(target.abs, target.rel);
    if (run.signal.aborted) throw cancelled();
    return;
  }
  const prefix = target.rel === "." ? "" : target.rel + "/";
  const pending = new Set<Promise<void>>();
  let files = 0;
  for await (const e of walk({ root: run.root, start: target, deniedSubstrings, allowDir, signal: run.signal })) {
    if (e.kind !== "file" || !run.includes(e.rel.slice(prefix.length))) continue;
    const p = searchOne(e.abs, e.rel).finally(() => pending.delete(p));
    pending.add(p);
    if (pending.size >= PARALLEL) await Promise.race(pending);
    if (++files % 2000 === 0) run.progress(files);
    if (collector.enough()) {
      collector.stopped = true;
      break;
    }
    if (run.signal.aborted) break;
  }
  await Promise.all(pending);
  if (run.signal.aborted) throw cancelled();
}
