// grep's `output` modes and `offset`, over the files the search kept: the listing past the first
// `offset` matching lines, the files with matches, or a count per file. The search itself (either
// engine, the visibility rule, the caps) is grepTree's; this only shapes what it found.
import { formatHits, type FileHits } from "../browse/grep-collect.js";
import { comparePaths } from "../browse/walk.js";
import { showName } from "../fs/names.js";

export type OutputMode = "content" | "files_with_matches" | "count";

/** The files past the first `offset` matching lines (context lines before a skipped match go too). */
function skipMatches(files: FileHits[], offset: number): FileHits[] {
  let left = offset;
  const out: FileHits[] = [];
  for (const f of [...files].sort((a, b) => comparePaths(a.path, b.path))) {
    if (left === 0) {
      out.push(f);
      continue;
    }
    const lines = [];
    let lastSkipped = -Infinity;
    for (const l of f.lines) {
      if (l.match && left > 0) {
        left--;
        lastSkipped = l.n;
        continue;
      }
      if (left > 0 || (!l.match && l.n < lastSkipped)) continue;
      lines.push(l);
    }
    if (lines.some((l) => l.match)) out.push({ ...f, lines });
  }
  return out;
}

export function shapeGrep(
  result: Record<string, unknown>,
  files: FileHits[],
  mode: OutputMode,
  offset: number,
  opts: { oneFile: boolean; context: number; maxBytes: number },
): Record<string, unknown> {
  if (mode === "content" && offset === 0) return result;
  const withMatches = [...files].filter((f) => f.matches > 0).sort((a, b) => comparePaths(a.path, b.path));
  const rest = { ...result };
  delete rest.results;
  delete rest.shown;
  if (mode === "files_with_matches")
    return { ...rest, files: withMatches.slice(offset).map((f) => showName(f.path)), ...(offset ? { offset } : {}) };
  if (mode === "count")
    return {
      ...rest,
      counts: withMatches.slice(offset).map((f) => ({ path: showName(f.path), matches: f.matches })),
      ...(offset ? { offset } : {}),
    };
  const out = formatHits(skipMatches(files, offset), opts.oneFile, opts.context, opts.maxBytes);
  return { ...rest, results: out.text, shown: out.shown, offset };
}
