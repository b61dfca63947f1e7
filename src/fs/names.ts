// File names that are not plain text: one escaping for showing them, and its inverse for taking them back.
//
// Inside latch a path is a JS string. A name's bytes that are not valid UTF-8 are held as lone low
// surrogates U+DC80..U+DCFF, one per byte (Python's "surrogateescape"): no valid UTF-8 name decodes
// to one and no call argument can hold one (the pipeline refuses lone surrogates), so the mapping from
// bytes is one-to-one. Node's fs would encode such a string lossily, so every fs call on a path that
// came from the disk or the resolver passes it through `osPath`, which gives the real bytes back as a
// Buffer (and the string itself, unchanged and at no cost, for the all-UTF-8 names that are nearly all).
//
// What the model sees (`showName`) is valid UTF-8 on one line, and unambiguous:
//   `\\` a backslash; `\n` `\t` `\r` those control characters; `\xhh` (two lowercase hex digits) any
//   other control character (U+0000..U+001F, U+007F) or a byte that is not part of valid UTF-8;
//   `\uhhhh` (four lowercase hex digits) a character that is valid UTF-8 but hides or moves text
//   (src/hiding.ts: C1 controls, bidi controls, invisible ones; a tag character as its two UTF-16
//   halves, `\udb40\udc41`). The joiners U+200C/U+200D are left alone: Persian, Indic scripts and
//   emoji need them.
// Everything else is shown as it is. `parseShown` reverses it; the resolver's rule for an input that
// reads both ways (a file literally named `a\n`) is in docs/tools.md ("Odd file names") and paths.ts.
import { isUtf8 } from "node:buffer";
import { HIDING_CLASS, TAG, uEscape } from "../hiding.js";

/** Any character showName changes: a backslash, a C0 control, a hiding one (src/hiding.ts), an escaped byte. */
const NEEDS_SHOWING = new RegExp(`[\\\\\\x00-\\x1f${HIDING_CLASS}\\uDC80-\\uDCFF]|${TAG}`);
const SHOWN_CHAR = new RegExp(`[\\\\\\x00-\\x1f${HIDING_CLASS}]|${TAG}|(?<![\\uD800-\\uDBFF])[\\uDC80-\\uDCFF]`, "g");
/** A lone low surrogate in the escaped-byte range: a name byte that is not valid UTF-8. */
const ESCAPED_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;
const NAMED: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r" };
const BYTE_BASE = 0xdc00;

function hex2(n: number): string {
  return "\\x" + n.toString(16).padStart(2, "0");
}

/** A name (or a path) as latch shows it: unchanged unless it holds a backslash, a control or hiding character, or a non-UTF-8 byte. */
export function showName(p: string): string {
  if (!NEEDS_SHOWING.test(p)) return p;
  return p.replace(SHOWN_CHAR, (c) => {
    const code = c.charCodeAt(0);
    if (NAMED[c] !== undefined) return NAMED[c];
    if (code >= 0xdc80 && code <= 0xdcff) return hex2(code - BYTE_BASE);
    return code < 0x80 ? hex2(code) : uEscape(c);
  });
}

/**
 * The path a shown form stands for, when `s` is exactly what showName prints for some path other
 * than `s` itself; undefined otherwise (no backslash, a backslash starting no escape, `\x41` where
 * showName would print `A`, `\u00e9` where it would print `é`, uppercase hex): then `s` can only be
 * read as it is.
 */
export function parseShown(s: string): string | undefined {
  if (!s.includes("\\")) return undefined;
  let out = "";
  const bytes: number[] = []; // a run of `\xhh` escapes: together they may be valid UTF-8, which is never escaped
  const flush = () => {
    if (bytes.length > 0) out += bytesToInternal(Buffer.from(bytes));
    bytes.length = 0;
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== "\\") {
      flush();
      out += c;
      continue;
    }
    const n = s[++i];
    if (n === "x" && /^[0-9a-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
      continue;
    }
    flush();
    if (n === "u" && /^[0-9a-f]{4}$/.test(s.slice(i + 1, i + 5))) {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 5), 16));
      i += 4;
    } else if (n === "\\") out += "\\";
    else if (n === "n") out += "\n";
    else if (n === "t") out += "\t";
    else if (n === "r") out += "\r";
    else return undefined;
  }
  flush();
  // Only the canonical form counts: `\x41`, or `\xc3\xa9` (valid UTF-8, shown as é), is not one.
  return showName(out) === s ? out : undefined;
}

/** A name's bytes as latch holds them: valid UTF-8 decoded, every other byte kept as an escaped byte. */
export function bytesToInternal(b: Uint8Array): string {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (isUtf8(buf)) return buf.toString("utf8");
  let out = "";
  let start = 0; // start of the current valid run
  let i = 0;
  while (i < buf.length) {
    const n = validSequenceLength(buf, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += buf.toString("utf8", start, i) + String.fromCharCode(BYTE_BASE + buf[i]);
    start = ++i;
  }
  return out + buf.toString("utf8", start, i);
}

/** The length of the well-formed UTF-8 sequence at `i` (Unicode table 3-7), or 0. */
function validSequenceLength(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k] >= lo && b[i + k] <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** Whether a path holds an escaped byte, i.e. fs must be given its bytes (osPath) rather than the string. */
export function hasEscapedBytes(p: string): boolean {
  return ESCAPED_BYTE.test(p);
}

/** What to hand node's fs for a path: the string itself, or its real bytes when it holds escaped bytes. */
export function osPath(p: string): string | Buffer {
  if (!hasEscapedBytes(p)) return p;
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < p.length; i++) {
    const code = p.charCodeAt(i);
    if (code < 0xdc80 || code > 0xdcff) continue;
    const prev = i > 0 ? p.charCodeAt(i - 1) : 0;
    if (prev >= 0xd800 && prev <= 0xdbff) continue; // the low half of a real pair
    parts.push(Buffer.from(p.slice(start, i), "utf8"), Buffer.from([code - BYTE_BASE]));
    start = i + 1;
  }
  parts.push(Buffer.from(p.slice(start), "utf8"));
  return Buffer.concat(parts);
}

/** The inverse of osPath for what fs returns (a realpath, a readlink) asked for as a Buffer. */
export function fromOsPath(p: string | Buffer): string {
  return typeof p === "string" ? p : bytesToInternal(p);
}
