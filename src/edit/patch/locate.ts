// Where each chunk of an update goes, and the new text. Chunks are found in order, each after the
// previous one. Exact lines are tried first; then, and only then, looser matches (trailing
// whitespace, surrounding whitespace, typographic punctuation), each reported to the caller so the
// model is told what it got wrong. The file's line ending (LF or CRLF) is kept.
import { ToolError } from "../../errors.js";
import { usesCrlf } from "../../fs/text.js";
import type { Chunk, PatchFormat } from "./types.js";

type Match = "exact" | "trailing whitespace" | "surrounding whitespace" | "punctuation";

const LEVELS: { name: Match; eq: (a: string, b: string) => boolean }[] = [
  { name: "exact", eq: (a, b) => a === b },
  { name: "trailing whitespace", eq: (a, b) => a.trimEnd() === b.trimEnd() },
  { name: "surrounding whitespace", eq: (a, b) => a.trim() === b.trim() },
  { name: "punctuation", eq: (a, b) => normalise(a) === normalise(b) },
];

/** A chunk matched other than exactly: which (1-based, in the file's patch) and how. */
export interface LooseMatch {
  chunk: number;
  line: number;
  how: Match;
}

export interface Applied {
  text: string;
  loose: LooseMatch[];
}

/**
 * The new text of a file from its current text and the chunks. Pure: the approval preview and the
 * write both call it on the same bytes. Throws ENOMATCH naming the chunk that could not be placed.
 */
export function applyChunks(text: string, chunks: Chunk[], format: PatchFormat, rel: string): Applied {
  const crlf = usesCrlf(text);
  const eol = crlf ? "\r\n" : "\n";
  const hadFinalEol = text === "" || text.endsWith("\n");
  const lines = text === "" ? [] : text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (crlf) for (let k = 0; k < lines.length; k++) if (lines[k].endsWith("\r")) lines[k] = lines[k].slice(0, -1);

  const loose: LooseMatch[] = [];
  const edits: { at: number; remove: number; insert: string[] }[] = [];
  let from = 0;
  let delta = 0; // unified diffs: how far earlier hunks moved the lines below them
  let touchesEnd = false;
  chunks.forEach((chunk, n) => {
    if (chunk.anchor !== undefined) {
      const hit = seek(lines, [chunk.anchor], from, false);
      if (!hit) throw notFound(rel, n, `the \`@@ ${chunk.anchor}\` line`, [chunk.anchor]);
      if (hit.how !== "exact") loose.push({ chunk: n + 1, line: hit.at + 1, how: hit.how });
      from = hit.at + 1;
    }
    let old = chunk.old;
    let neu = chunk.new;
    if (old.length === 0) {
      // A pure addition: after its anchor, at the unified hint, or else at the end (as Codex does).
      const at =
        chunk.anchor !== undefined
          ? from
          : chunk.hint !== undefined
            ? Math.min(lines.length, Math.max(from, chunk.hint + delta))
            : lines.length;
      edits.push({ at, remove: 0, insert: neu });
      if (at === lines.length) touchesEnd = true;
      delta += neu.length;
      from = at;
      return;
    }
    let hit = chunk.hint !== undefined ? exactAt(lines, old, chunk.hint - 1 + delta, from) : undefined;
    hit ??= seek(lines, old, from, chunk.eof);
    if (hit) neu = withOwnContext(chunk, lines, hit.at);
    if (!hit && old[old.length - 1] === "") {
      // Codex: a trailing empty context line may stand for the end of the file.
      old = old.slice(0, -1);
      if (neu[neu.length - 1] === "") neu = neu.slice(0, -1);
      hit = seek(lines, old, from, chunk.eof);
    }
    if (!hit) throw notFound(rel, n, "its lines", chunk.old);
    if (hit.how !== "exact") loose.push({ chunk: n + 1, line: hit.at + 1, how: hit.how });
    edits.push({ at: hit.at, remove: old.length, insert: neu });
    if (hit.at + old.length === lines.length) touchesEnd = true;
    delta += neu.length - old.length;
    from = hit.at + old.length;
  });

  const out: string[] = [];
  let k = 0;
  for (const e of edits) {
    for (; k < e.at; k++) out.push(lines[k]);
    for (const item of e.insert) out.push(item);
    k = e.at + e.remove;
  }
  for (; k < lines.length; k++) out.push(lines[k]);
  // Codex always ends a file it updates with a newline; a unified diff keeps the file's own ending
  // unless a chunk at the end says `\ No newline at end of file`.
  let finalEol = true;
  if (format === "unified") {
    const last = chunks[chunks.length - 1];
    finalEol = touchesEnd ? last?.newNoEol !== true : hadFinalEol;
  }
  const body = out.join(eol);
  return { text: out.length === 0 ? "" : finalEol ? body + eol : body, loose };
}

/** The new lines, with each context line taken from the file as it is (a loose match keeps its whitespace). */
function withOwnContext(chunk: Chunk, lines: string[], at: number): string[] {
  const out: string[] = [];
  let o = 0;
  let n = 0;
  for (const k of chunk.kinds) {
    if (k === " ") {
      out.push(lines[at + o]);
      o++;
      n++;
    } else if (k === "-") o++;
    else out.push(chunk.new[n++]);
  }
  return out;
}

function exactAt(lines: string[], pattern: string[], at: number, from: number): Hit | undefined {
  if (at < from || at + pattern.length > lines.length) return undefined;
  for (let j = 0; j < pattern.length; j++) if (lines[at + j] !== pattern[j]) return undefined;
  return { at, how: "exact" };
}

interface Hit {
  at: number;
  how: Match;
}

/** The first place at or after `from` where `pattern` stands, trying each level over the whole range before the next. */
function seek(lines: string[], pattern: string[], from: number, eof: boolean): Hit | undefined {
  if (pattern.length > lines.length) return undefined;
  const start = eof ? lines.length - pattern.length : from;
  if (start < from && !eof) return undefined;
  for (const level of LEVELS) {
    for (let i = Math.max(0, start); i + pattern.length <= lines.length; i++) {
      let ok = true;
      for (let j = 0; j < pattern.length && ok; j++) ok = level.eq(lines[i + j], pattern[j]);
      if (ok) return { at: i, how: level.name };
    }
  }
  return undefined;
}

function normalise(s: string): string {
  return s
    .trim()
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ");
}

function notFound(rel: string, n: number, what: string, expected: string[]): ToolError {
  const shown = expected.slice(0, 8).map((l) => `  ${l}`);
  if (expected.length > 8) shown.push(`  … (${expected.length - 8} more lines)`);
  return new ToolError(
    "ENOMATCH",
    `Chunk ${n + 1} of \`${rel}\` does not apply: ${what} were not found after the previous chunk; no file was changed. ` +
      `Read the file again and make the context and removed lines match it. Expected:\n${shown.join("\n")}`,
  );
}
