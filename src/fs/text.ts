// Small pure helpers over file bytes: hashing, binary sniffing, line endings.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";

export const SNIFF_BYTES = 8192;

export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * A file is binary when its first 8 KiB hold a NUL byte, or when most of them are not valid UTF-8.
 * A multi-byte character cut by the 8 KiB edge is not held against the file.
 */
export function looksBinary(head: Uint8Array): boolean {
  const sample = head.subarray(0, SNIFF_BYTES);
  if (sample.includes(0)) return true;
  if (sample.length === 0 || isUtf8(sample)) return false; // the common case, without decoding
  const text = new TextDecoder("utf-8", { fatal: false }).decode(trimPartialChar(sample));
  let bad = 0;
  for (const ch of text) if (ch === "\uFFFD") bad++;
  return bad > 0 && bad / Math.max(1, text.length) > 0.3;
}

/** Drop a trailing incomplete UTF-8 sequence, so a sample cut mid-character decodes cleanly. */
function trimPartialChar(b: Uint8Array): Uint8Array {
  for (let i = b.length - 1, k = 0; i >= 0 && k < 4; i--, k++) {
    const c = b[i];
    if ((c & 0xc0) === 0x80) continue; // continuation byte
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > k + 1 ? b.subarray(0, i) : b;
  }
  return b;
}

/** Whether the text's line breaks are mostly CRLF. */
export function usesCrlf(text: string): boolean {
  const crlf = text.split("\r\n").length - 1;
  if (crlf === 0) return false;
  const lf = text.split("\n").length - 1;
  return crlf * 2 >= lf;
}

/** Turn bare LF into CRLF (leaves existing CRLF alone). */
export function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

/** How many newlines `data` holds in [from, to): one indexOf per line, never a decode. */
export function countNewlines(data: Uint8Array | string, from = 0, to = data.length): number {
  let n = 0;
  let i = from - 1;
  if (typeof data === "string") while ((i = data.indexOf("\n", i + 1)) !== -1 && i < to) n++;
  else while ((i = data.indexOf(10, i + 1)) !== -1 && i < to) n++;
  return n;
}

/** Count of non-overlapping occurrences of `needle` in `hay`. */
export function countOccurrences(hay: string, needle: string): number {
  if (needle === "") return 0;
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

export function humanSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[u]}`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first string in `v` (by its key path, e.g. `content` or `edits[2].lines[0]`) that holds a lone
 * UTF-16 surrogate: no UTF-8 file or path can hold one, and encoding it would silently write U+FFFD.
 */
export function findLoneSurrogate(v: unknown, at = ""): { at: string; index: number } | undefined {
  if (typeof v === "string") {
    const m = LONE_SURROGATE.exec(v);
    return m ? { at, index: m.index } : undefined;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findLoneSurrogate(v[i], `${at}[${i}]`);
      if (hit) return hit;
    }
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const hit = findLoneSurrogate(x, at ? `${at}.${k}` : k);
      if (hit) return hit;
    }
  }
  return undefined;
}
