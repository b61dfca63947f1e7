// Exact-string replacement shared by edit_file and sed: byte-exact matching that keeps CRLF files
// CRLF, and a no-match error that quotes the closest lines so the model can fix its old_string.
import { Refusal, ToolError } from "../errors.js";
import type { MutationOutcome } from "./mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
import { toCrlf, usesCrlf, countOccurrences } from "../fs/text.js";
import { showName } from "../fs/names.js";

/** The file's text, refused when decoding and re-encoding would not give back the same bytes. */
export function decodeExact(bytes: Buffer, target: ResolvedPath): string {
  const text = bytes.toString("utf8");
  if (text.includes("\uFFFD") && !Buffer.from(text, "utf8").equals(bytes)) throw notUtf8(target);
  return text;
}

// The answers an exact-string edit gives, shared by the in-memory and the streamed path.
export function notUtf8(target: ResolvedPath): Refusal {
  return new Refusal(
    `\`${showName(target.rel)}\` is not valid UTF-8; an exact-string edit could change bytes you did not ask to change.`,
    "Rewrite it with write_file after reading it, or edit it with the shell.",
  );
}

export function missingFile(target: ResolvedPath): ToolError {
  return new ToolError("ENOENT", `\`${showName(target.rel)}\` does not exist. Create it with write_file.`);
}

/** `near`: the closest lines, or a hint of where to look when they were not computed. */
export function noMatch(target: ResolvedPath, near: string): ToolError {
  return new ToolError(
    "ENOMATCH",
    `old_string was not found in \`${showName(target.rel)}\`; the file is unchanged. Read the file again and copy the text exactly.` +
      (near ? `\n${near}` : ""),
  );
}

/** An error, like sed's ECOUNT and a missing match's ENOMATCH: one status for one kind of outcome. */
export function tooMany(target: ResolvedPath, count: number, lines: number[]): ToolError {
  return new ToolError(
    "ECOUNT",
    `old_string occurs ${count} times in \`${showName(target.rel)}\` (at lines ${lines.join(", ")}); the file is unchanged. Add surrounding lines to old_string so it matches once, or set replace_all to change every occurrence.`,
  );
}

export interface Needle {
  find: string;
  replace: string;
  count: number;
}

/**
 * Match `find` byte-exactly; in a CRLF file a model's LF-only strings are matched as CRLF and the
 * replacement written as CRLF, so the file keeps one kind of line ending.
 */
export function prepareNeedle(text: string, find: string, replace: string): Needle {
  const crlf = usesCrlf(text);
  let count = countOccurrences(text, find);
  if (count === 0 && crlf && find.includes("\n") && !find.includes("\r")) {
    const alt = toCrlf(find);
    const n = countOccurrences(text, alt);
    if (n > 0) {
      find = alt;
      count = n;
    }
  }
  if (crlf && replace.includes("\n") && !replace.includes("\r")) replace = toCrlf(replace);
  return { find, replace, count };
}

/** Replace the first occurrence, or all of them. */
export function replaceIn(text: string, n: Needle, all: boolean): string {
  if (all) return text.split(n.find).join(n.replace);
  const at = text.indexOf(n.find);
  return text.slice(0, at) + n.replace + text.slice(at + n.find.length);
}

/** The 1-based lines where `find` starts (at most `max` of them). */
export function occurrenceLines(text: string, find: string, max = 10): number[] {
  const out: number[] = [];
  let line = 1;
  let scanned = 0;
  for (let i = text.indexOf(find); i !== -1 && out.length < max; i = text.indexOf(find, i + find.length)) {
    for (let j = text.indexOf("\n", scanned); j !== -1 && j < i; j = text.indexOf("\n", j + 1)) {
      line++;
      scanned = j + 1;
    }
    out.push(line);
  }
  return out;
}

/** The lines of `text` most like the first line of `needle`, numbered, for a no-match error. */
export function closestLines(text: string, needle: string, maxLines = 12): string {
  const lines = text.split("\n");
  const probe =
    needle
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? needle.trim();
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < lines.length; i++) {
    const s = similarity(probe, lines[i].trim());
    if (s > bestScore) {
      bestScore = s;
      best = i;
    }
  }
  if (best < 0 || bestScore < 0.3) return "";
  const span = Math.min(maxLines, needle.split("\n").length + 2);
  const from = Math.max(0, best - 1);
  return lines
    .slice(from, from + span)
    .map((l, k) => `${String(from + k + 1).padStart(6)}: ${l.replace(/\r$/, "").slice(0, 300)}`)
    .join("\n");
}

/** Dice coefficient over character bigrams: cheap, and forgiving of whitespace and small typos. */
function similarity(a: string, b: string): number {
  if (a === b) return a === "" ? 0 : 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const g = a.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  let hit = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = grams.get(g) ?? 0;
    if (n > 0) {
      grams.set(g, n - 1);
      hit++;
    }
  }
  return (2 * hit) / (a.length - 1 + (b.length - 1));
}

/** The result fields every mutation reports, from mutate()'s outcome (its hashes, not new ones). */
export function mutationSummary(target: ResolvedPath, out: MutationOutcome) {
  const before =
    out.before === null || out.beforeSha === null ? null : { bytes: out.before.length, sha256: out.beforeSha };
  return summaryOf(target, before, { bytes: out.after.length, sha256: out.afterSha }, out.written, out.warning);
}

/** Size and hash of one side of a mutation: all a streamed edit keeps of it. */
export interface ContentFacts {
  bytes: number;
  sha256: string;
}

/** What a write tool reports; `warning`: written, but something after the rename could not be made sure of. */
export function summaryOf(
  target: ResolvedPath,
  before: ContentFacts | null,
  after: ContentFacts,
  written: boolean,
  warning?: string,
) {
  return {
    path: showName(target.rel),
    written,
    old_bytes: before === null ? null : before.bytes,
    new_bytes: after.bytes,
    old_sha256: before === null ? null : before.sha256,
    new_sha256: after.sha256,
    ...(warning ? { warning } : {}),
  };
}
