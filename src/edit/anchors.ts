// Line anchors for hash-anchored editing. An anchored read shows each line as `N#ID|text`; hash_edit
// takes `N#ID` back and checks that line N still has that ID. The number makes identical lines
// unambiguous; the ID proves the model saw the line's current text.
//
// The ID is 4 characters of Crockford base32 (no I, L, O or U, so nothing reads as another) holding
// 20 bits: the line's length in characters mod 3, times P, plus a polynomial hash of its code points
// mod the prime P. Inserting or deleting one character changes the length mod 3; replacing one
// character changes the hash by (new - old) * B^k mod P, never 0 while the two code points differ by
// less than P (any two in the BMP; any two assigned characters). So a one-character change always
// alters the ID; other changes collide about once in a million.
import { Refusal, ToolError, expected } from "../errors.js";
import type { LineWindow } from "../fs/read-lines.js";

export const ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ID_CHARS = 4;
const P = 349_519; // the largest prime with 3 * P < 2^20
const B = 131_071;

/** The anchor ID of one line's text (without its line ending). */
export function lineId(text: string): string {
  let h = 0;
  let len = 0;
  for (const ch of text) {
    h = (h * B + ch.codePointAt(0)!) % P;
    len++;
  }
  let v = (len % 3) * P + h;
  let out = "";
  for (let i = 0; i < ID_CHARS; i++) {
    out = ID_ALPHABET[v & 31] + out;
    v >>>= 5;
  }
  return out;
}

export interface Line {
  text: string;
  /** "\n", "\r\n", or "" for a last line without a line ending. */
  eol: string;
}

/** The lines of a text as the line tools count them: a final line ending opens no new line. */
export function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf("\n", from);
    if (nl === -1) {
      lines.push({ text: text.slice(from), eol: "" });
      break;
    }
    const crlf = nl > from && text[nl - 1] === "\r";
    lines.push({ text: text.slice(from, crlf ? nl - 1 : nl), eol: crlf ? "\r\n" : "\n" });
    from = nl + 1;
  }
  return lines;
}

/** One line as an anchored read shows it. */
export function anchoredLine(n: number, text: string): string {
  return `${n}#${lineId(text)}|${text}`;
}

/** Lines numbered from `first`, one `N#ID|text` per line. */
export function formatAnchored(texts: readonly string[], first: number): string {
  let out = "";
  for (let i = 0; i < texts.length; i++) out += anchoredLine(first + i, texts[i]) + "\n";
  return out;
}

export interface Anchor {
  line: number;
  id: string;
}

const ANCHOR_RE = /^\s*(\d+)\s*#\s*([0-9A-Za-z]{3,8})\s*(?:\|[\s\S]*)?$/;

/**
 * `N#ID`, as copied from an anchored read; a copied `|text` tail is ignored (the ID already checks the
 * text). Lower case, and O, I, L for 0, 1, 1, are read as Crockford base32 reads them.
 */
export function parseAnchor(raw: string, field: string): Anchor {
  const m = ANCHOR_RE.exec(raw);
  const line = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(line) || line < 1) {
    throw new ToolError(
      "EINVAL",
      expected(field, "an anchor `N#ID` from a read with anchors: true, such as `12#K3FZ`", raw),
    );
  }
  const id = m[2].toUpperCase().replace(/O/g, "0").replace(/[IL]/g, "1");
  return { line, id };
}

/** Lines of an edit that still carry a read's `N#ID|` prefix: a common copy slip. */
export function looksAnchored(texts: readonly string[]): boolean {
  return texts.length > 0 && texts.every((t) => /^\d+#[0-9A-Z]{4}\|/.test(t));
}

/** A refusal for anchors that no longer match; hash_edit lets the model retry from what it quotes. */
export class StaleAnchors extends Refusal {}

export interface StaleAnchor {
  field: string;
  anchor: Anchor;
}

/** Quote the current state of each stale anchor's line, and where its expected text went, if anywhere. */
export function staleRefusal(rel: string, lines: readonly Line[], stale: readonly StaleAnchor[]): StaleAnchors {
  const parts = stale.map(({ field, anchor }) => {
    const { line, id } = anchor;
    const now =
      line > lines.length
        ? `line ${line} is past the end (the file has ${lines.length} line${lines.length === 1 ? "" : "s"})`
        : `line ${line} is now \`${anchoredLine(line, lines[line - 1].text)}\``;
    const moved = findId(lines, id, line);
    const where = moved.length
      ? `; a line with ID ${id} is at ${moved.map((n) => `\`${anchoredLine(n, lines[n - 1].text)}\``).join(", ")}`
      : "";
    return `${field} \`${line}#${id}\`: ${now}${where}`;
  });
  const n = stale.length;
  return new StaleAnchors(
    `${n} anchor${n === 1 ? "" : "s"} in \`${rel}\` no longer match${n === 1 ? "es" : ""} the file, so no edit was applied and the file is unchanged.\n${parts.join("\n")}`,
    "Retry with the current anchors quoted above (no full re-read is needed), or read the lines again with read_file_range and anchors: true.",
  );
}

/** The lines nearest to `near` whose ID is `id` (at most 3). */
function findId(lines: readonly Line[], id: string, near: number): number[] {
  const hits: number[] = [];
  for (let i = 0; i < lines.length; i++) if (i + 1 !== near && lineId(lines[i].text) === id) hits.push(i + 1);
  return hits.sort((a, b) => Math.abs(a - near) - Math.abs(b - near)).slice(0, 3);
}

export interface AnchoredWindow {
  content: string;
  endLine: number;
  nextStartLine?: number;
  /** Set when a line was too long to show whole: it carries no anchor. */
  cutLine?: number;
}

/**
 * A read window with every line anchored, cut at whole lines to the output budget (the prefixes make
 * it longer than the plain window). A line cut by the budget is shown without an ID, since its ID
 * covers text that was not read.
 */
export function anchorWindow(w: LineWindow, maxBytes: number): AnchoredWindow {
  const lines = splitLines(w.content);
  let content = "";
  let bytes = 0;
  let endLine = w.startLine - 1;
  for (let i = 0; i < lines.length; i++) {
    const n = w.startLine + i;
    const row = n === w.cutLine ? `${n}#|${lines[i].text}\n` : anchoredLine(n, lines[i].text) + "\n";
    const size = Buffer.byteLength(row);
    if (bytes + size > maxBytes && i > 0) {
      return { content, endLine, nextStartLine: endLine + 1 };
    }
    content += row;
    bytes += size;
    endLine = n;
  }
  return { content, endLine: w.endLine, nextStartLine: w.nextStartLine, cutLine: w.cutLine };
}
