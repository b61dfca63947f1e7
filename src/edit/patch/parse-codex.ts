// Codex's patch format, parsed as codex-rs/apply-patch does (parser.rs): marker lines are compared
// with surrounding whitespace trimmed; the first chunk of an update may omit its `@@`; an empty
// line inside a chunk is an empty context line.
import { syntaxError, type Chunk, type FileOp } from "./types.js";

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const EOF_MARK = "*** End of File";

/** `lines` are the patch's lines without their endings. */
export function parseCodex(all: string[]): FileOp[] {
  let lines = trimBlankEnds(all);
  lines = stripHeredoc(lines);
  if (lines.length === 0 || lines[0].trim() !== BEGIN) throw syntaxError(1, `the first line must be \`${BEGIN}\`.`);
  if (lines.length < 2 || lines[lines.length - 1].trim() !== END)
    throw syntaxError(lines.length, `the last line must be \`${END}\`.`);
  const ops: FileOp[] = [];
  let i = 1;
  const last = lines.length - 1;
  while (i < last) {
    const head = lines[i].trim();
    if (head === "") {
      i++;
      continue;
    }
    if (head.startsWith(ADD)) {
      const path = head.slice(ADD.length).trim();
      const body: string[] = [];
      i++;
      while (i < last && lines[i].startsWith("+")) body.push(lines[i++].slice(1));
      ops.push({ kind: "add", path, lines: body, noEol: false });
    } else if (head.startsWith(DELETE)) {
      ops.push({ kind: "delete", path: head.slice(DELETE.length).trim() });
      i++;
    } else if (head.startsWith(UPDATE)) {
      const at = i + 1;
      const path = head.slice(UPDATE.length).trim();
      i++;
      let moveTo: string | undefined;
      if (i < last && lines[i].trim().startsWith(MOVE)) moveTo = lines[i++].trim().slice(MOVE.length).trim();
      const chunks: Chunk[] = [];
      while (i < last) {
        if (lines[i].trim() === "") {
          i++;
          continue;
        }
        if (lines[i].trim().startsWith("***")) break;
        i = parseChunk(lines, i, last, chunks.length === 0, chunks);
      }
      if (chunks.length === 0)
        throw syntaxError(at, `the update of \`${path}\` has no change: add a \`@@\` chunk of -/+/space lines.`);
      ops.push({ kind: "update", path, ...(moveTo !== undefined ? { moveTo } : {}), chunks, format: "codex" });
    } else {
      throw syntaxError(
        i + 1,
        `\`${head}\` is not a valid file header; use \`*** Add File: PATH\`, \`*** Delete File: PATH\` or \`*** Update File: PATH\`.`,
      );
    }
  }
  return ops;
}

/** One chunk from line `i`; returns the index after it. */
function parseChunk(lines: string[], i: number, last: number, first: boolean, out: Chunk[]): number {
  const head = lines[i].trimEnd();
  const chunk: Chunk = { old: [], new: [], kinds: "", eof: false };
  if (head === "@@") i++;
  else if (head.startsWith("@@ ")) {
    chunk.anchor = head.slice(3);
    i++;
  } else if (!first) {
    throw syntaxError(i + 1, `expected a \`@@\` line to start the next chunk, got \`${head}\`.`);
  }
  let n = 0;
  for (; i < last; i++) {
    const line = lines[i];
    if (line.trim() === EOF_MARK) {
      if (n === 0) break;
      chunk.eof = true;
      i++;
      break;
    }
    const c = line[0];
    if (line === "" || c === " ") {
      chunk.old.push(line.slice(1));
      chunk.new.push(line.slice(1));
      chunk.kinds += " ";
    } else if (c === "+") {
      chunk.new.push(line.slice(1));
      chunk.kinds += "+";
    } else if (c === "-") {
      chunk.old.push(line.slice(1));
      chunk.kinds += "-";
    } else if (n === 0)
      throw syntaxError(
        i + 1,
        `\`${line}\` starts with neither ' ' (context), '+' (added) nor '-' (removed); every chunk line must.`,
      );
    else break;
    n++;
  }
  if (n === 0) throw syntaxError(i + 1, "a chunk has no lines.");
  out.push(chunk);
  return i;
}

function trimBlankEnds(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a].trim() === "") a++;
  while (b > a && lines[b - 1].trim() === "") b--;
  return lines.slice(a, b);
}

/** A patch sent as a shell heredoc (`<<'EOF'` … `EOF`), as models trained on Codex sometimes do. */
function stripHeredoc(lines: string[]): string[] {
  if (lines.length >= 4 && /^<<['"]?EOF['"]?$/.test(lines[0].trim()) && lines[lines.length - 1].trim() === "EOF")
    return lines.slice(1, -1);
  return lines;
}
