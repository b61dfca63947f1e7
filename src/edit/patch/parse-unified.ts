// Unified diffs as `git diff` and `diff -u` print them: `diff --git` headers (optional), `---`/`+++`
// file lines with `a/` `b/` prefixes or /dev/null, renames, `@@ -a,b +c,d @@` hunks read by their
// counts (a hunk whose counts are wrong ends at the first line that cannot belong to it).
import { syntaxError, type Chunk, type FileOp } from "./types.js";

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

interface Section {
  from?: string | null;
  to?: string | null;
  renameFrom?: string;
  renameTo?: string;
  chunks: Chunk[];
  addNoEol: boolean;
  line: number;
}

export function parseUnified(lines: string[]): FileOp[] {
  const sections: Section[] = [];
  let cur: Section | undefined;
  const open = (line: number): Section => {
    cur = { chunks: [], addNoEol: false, line };
    sections.push(cur);
    return cur;
  };
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (line.startsWith("diff --git ")) {
      open(i + 1);
      i++;
    } else if (line.startsWith("--- ") && i + 1 < lines.length && lines[i + 1].startsWith("+++ ")) {
      const s = cur && cur.from === undefined && cur.chunks.length === 0 ? cur : open(i + 1);
      s.from = filePath(line.slice(4));
      s.to = filePath(lines[i + 1].slice(4));
      i += 2;
    } else if (line.startsWith("rename from ") && cur) {
      cur.renameFrom = line.slice(12).trim();
      i++;
    } else if (line.startsWith("rename to ") && cur) {
      cur.renameTo = line.slice(10).trim();
      i++;
    } else if (line.startsWith("GIT binary patch") || /^Binary files .* differ$/.test(line)) {
      throw syntaxError(i + 1, "binary patches are not supported; write binary files with the shell.");
    } else if (line.startsWith("@@ ")) {
      if (!cur || (cur.from === undefined && cur.renameFrom === undefined))
        throw syntaxError(i + 1, "a hunk comes before any `--- a/PATH` / `+++ b/PATH` file header.");
      i = readHunk(lines, i, cur);
    } else {
      i++; // index, mode and similarity lines, and any text between files, carry nothing we apply
    }
  }
  const ops: FileOp[] = [];
  for (const s of sections) {
    // null (/dev/null) is a side, not a missing one: `??` would skip it.
    const from = s.from !== undefined ? s.from : s.renameFrom;
    const to = s.to !== undefined ? s.to : s.renameTo;
    if (from === undefined || to === undefined) continue; // a mode-only change
    if (from === null && to === null) throw syntaxError(s.line, "both sides of a file are /dev/null.");
    if (from === null) {
      const added = s.chunks.flatMap((c) => c.new);
      ops.push({ kind: "add", path: to as string, lines: added, noEol: s.chunks.some((c) => c.newNoEol === true) });
    } else if (to === null) {
      ops.push({ kind: "delete", path: from });
    } else {
      const moveTo = to !== from ? to : undefined;
      if (s.chunks.length === 0 && moveTo === undefined) continue;
      ops.push({ kind: "update", path: from, ...(moveTo ? { moveTo } : {}), chunks: s.chunks, format: "unified" });
    }
  }
  return ops;
}

/** The path of a `---`/`+++` line: null for /dev/null; `a/`/`b/` dropped; a trailing timestamp dropped. */
function filePath(raw: string): string | null {
  let p = raw.split("\t")[0].trimEnd();
  if (p.startsWith('"') && p.endsWith('"')) p = JSON.parse(p) as string;
  if (p === "/dev/null") return null;
  if (/^[ab]\//.test(p)) p = p.slice(2);
  return p;
}

function readHunk(lines: string[], i: number, s: Section): number {
  const m = HUNK.exec(lines[i]);
  if (!m) throw syntaxError(i + 1, `\`${lines[i]}\` is not a hunk header like \`@@ -12,4 +12,5 @@\`.`);
  let oldLeft = m[2] === undefined ? 1 : Number(m[2]);
  let newLeft = m[4] === undefined ? 1 : Number(m[4]);
  const chunk: Chunk = { old: [], new: [], kinds: "", eof: false, hint: Number(m[1]) };
  let last: "old" | "new" | "both" = "both";
  i++;
  for (; i < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i].startsWith("\\")); i++) {
    const line = lines[i];
    const c = line[0];
    if (c === "\\") {
      if (last !== "old") chunk.newNoEol = true;
      continue;
    }
    if (line === "" || c === " ") {
      if (oldLeft === 0 || newLeft === 0) break;
      chunk.old.push(line.slice(1));
      chunk.new.push(line.slice(1));
      chunk.kinds += " ";
      oldLeft--;
      newLeft--;
      last = "both";
    } else if (c === "-" && oldLeft > 0 && !(line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ "))) {
      chunk.old.push(line.slice(1));
      chunk.kinds += "-";
      oldLeft--;
      last = "old";
    } else if (c === "+" && newLeft > 0) {
      chunk.new.push(line.slice(1));
      chunk.kinds += "+";
      newLeft--;
      last = "new";
    } else break;
  }
  // `-0,0`: the old side is empty; git's hunk for a new file, or an insertion at the very start.
  if (chunk.old.length === 0 && Number(m[1]) === 0) chunk.hint = 0;
  s.chunks.push(chunk);
  return i;
}
