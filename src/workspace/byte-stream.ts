// Byte-stream pieces for edits of files too large to hold: a needle matcher with an overlap window,
// a UTF-8 check that carries a character cut by a chunk edge, and line-ending counts. Matching UTF-8
// bytes is the same as matching the decoded text: UTF-8 is self-synchronising, so a well-formed
// needle's bytes can only start on a character boundary of well-formed text.
import { isUtf8 } from "node:buffer";

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/**
 * Leftmost, non-overlapping occurrences of `needle` (as String.indexOf finds them, stepping past each
 * match), fed chunk by chunk. Holds back at most needle.length - 1 bytes between chunks.
 * With a `replacement`, push() returns the output pieces: the stream with the first `limit` matches
 * replaced; the pieces are views into the chunk, valid until the next read into it.
 */
export class NeedleStream {
  count = 0;
  /** Byte offsets of the first matches (up to 10), for the "occurs N times" refusal. */
  readonly firstAt: number[] = [];
  private tail: Buffer = EMPTY;
  private tailAt = 0; // stream offset of tail[0]
  private from = 0; // stream offset where the next match may start

  constructor(
    private readonly needle: Buffer,
    private readonly replacement: Buffer | null = null,
    private readonly limit = Infinity,
  ) {
    if (needle.length === 0) throw new Error("NeedleStream needs a non-empty needle");
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const win = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const base = this.tailAt;
    let pos = 0; // window offset up to which output has been produced
    while (this.count < this.limit) {
      const i = win.indexOf(this.needle, Math.max(0, this.from - base)); // a negative offset would count from the end
      if (i === -1) break;
      this.count++;
      if (this.firstAt.length < 10) this.firstAt.push(base + i);
      if (this.replacement) {
        if (i > pos) out.push(win.subarray(pos, i));
        if (this.replacement.length) out.push(this.replacement);
        pos = i + this.needle.length;
      }
      this.from = base + i + this.needle.length;
    }
    const end = base + win.length;
    // Bytes before `keep` can start no further match; hold back the rest (less than a needle).
    const keep = this.count >= this.limit ? end : Math.max(this.from, end - (this.needle.length - 1));
    if (this.replacement && keep - base > pos) out.push(win.subarray(pos, keep - base));
    this.tail = keep < end ? Buffer.from(win.subarray(keep - base)) : EMPTY; // a copy: the chunk is reused
    this.tailAt = keep;
    return out;
  }

  /** The held-back bytes, at the end of the stream. */
  end(): Buffer[] {
    const rest = this.replacement && this.tail.length ? [this.tail] : [];
    this.tail = EMPTY;
    return rest;
  }
}

/** Whether a stream of chunks is well-formed UTF-8, a character cut by a chunk edge included. */
export class Utf8Check {
  ok = true;
  private carry: Buffer = EMPTY;

  push(chunk: Buffer): void {
    if (!this.ok) return;
    const b = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = completeLength(b);
    if (!isUtf8(b.subarray(0, cut))) this.ok = false;
    this.carry = Buffer.from(b.subarray(cut));
  }

  end(): boolean {
    if (this.carry.length) this.ok = false; // the stream ends inside a character
    return this.ok;
  }
}

/** The length of `b` without a trailing incomplete UTF-8 sequence (at most 3 bytes held back). */
function completeLength(b: Buffer): number {
  for (let i = b.length - 1, k = 1; i >= 0 && k <= 4; i--, k++) {
    const c = b[i];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > k ? i : b.length;
  }
  return b.length;
}

/** LF and CRLF counts over a stream, for usesCrlf()'s rule without the text. */
export class LineEnds {
  lf = 0;
  crlf = 0;
  private last = -1;

  push(chunk: Buffer): void {
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      this.lf++;
      if ((i > 0 ? chunk[i - 1] : this.last) === CR) this.crlf++;
    }
    if (chunk.length) this.last = chunk[chunk.length - 1];
  }

  /** Mostly CRLF: the same rule as usesCrlf() in text.ts. */
  get usesCrlf(): boolean {
    return this.crlf > 0 && this.crlf * 2 >= this.lf;
  }
}

/** Count LF bytes in `b` before index `to`. */
export function countLf(b: Buffer, to = b.length): number {
  let n = 0;
  for (let i = b.indexOf(LF); i !== -1 && i < to; i = b.indexOf(LF, i + 1)) n++;
  return n;
}
