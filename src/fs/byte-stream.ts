// Byte-stream pieces for edits of files too large to hold: a needle matcher with an overlap window,
// a UTF-8 check that carries a character cut by a chunk edge, and line-ending counts. Matching UTF-8
// bytes is the same as matching the decoded text: UTF-8 is self-synchronising, so a well-formed
// needle's bytes can only start on a character boundary of well-formed text.

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/**
 * Leftmost, non-overlapping occurrences of `needle` (as String.indexOf finds them, stepping past each
 * match), fed chunk by chunk. Holds back fewer than needle.length bytes between chunks, and searches
 * the seam between them apart, so a chunk is never copied.
 * With a `replacement`, push() returns the output pieces: the stream with the first `limit` matches
 * replaced; the pieces are views into the chunk, valid until the next read into it.
 */
export class NeedleStream {
  count = 0;
  /** Byte offsets of the first matches (up to 10), for the "occurs N times" refusal. */
  readonly firstAt: number[] = [];
  private tail: Buffer = EMPTY; // the stream's bytes [chunkAt - tail.length, chunkAt): may start a match
  private chunkAt = 0; // stream offset of the chunk being pushed
  private from = 0; // stream offset where the next match may start
  private done = 0; // stream offset up to which output has been produced

  constructor(
    private readonly needle: Buffer,
    private readonly replacement: Buffer | null = null,
    private readonly limit = Infinity,
  ) {
    if (needle.length === 0) throw new Error("NeedleStream needs a non-empty needle");
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const L = this.needle.length;
    const tailAt = this.chunkAt - this.tail.length;
    const end = this.chunkAt + chunk.length;
    // The stream's bytes [a, b), from the tail and the chunk.
    const slice = (a: number, b: number) => {
      if (a < this.chunkAt) out.push(this.tail.subarray(a - tailAt, Math.min(b, this.chunkAt) - tailAt));
      if (b > this.chunkAt && b > a)
        out.push(chunk.subarray(Math.max(a, this.chunkAt) - this.chunkAt, b - this.chunkAt));
    };
    const hit = (at: number) => {
      this.count++;
      if (this.firstAt.length < 10) this.firstAt.push(at);
      if (this.replacement) {
        if (at > this.done) slice(this.done, at);
        if (this.replacement.length) out.push(this.replacement);
        this.done = at + L;
      }
      this.from = at + L;
    };
    // Matches that start in the tail end within its next L - 1 bytes: search that seam alone.
    if (this.tail.length && this.count < this.limit) {
      const seam = Buffer.concat([this.tail, chunk.subarray(0, L - 1)]);
      for (;;) {
        const i = seam.indexOf(this.needle, Math.max(0, this.from - tailAt));
        if (i === -1 || i >= this.tail.length || this.count >= this.limit) break;
        hit(tailAt + i);
      }
    }
    while (this.count < this.limit) {
      const i = chunk.indexOf(this.needle, Math.max(0, this.from - this.chunkAt)); // never negative: that counts from the end
      if (i === -1) break;
      hit(this.chunkAt + i);
    }
    // Bytes before `keep` can start no further match; hold back the rest (fewer than L).
    const keep = this.count >= this.limit ? end : Math.max(this.from, end - (L - 1));
    if (this.replacement && keep > this.done) {
      slice(this.done, keep);
      this.done = keep;
    }
    const held: Buffer[] = [];
    if (keep < this.chunkAt) held.push(this.tail.subarray(keep - tailAt));
    if (keep < end) held.push(chunk.subarray(Math.max(keep, this.chunkAt) - this.chunkAt));
    this.tail = held.length ? Buffer.concat(held) : EMPTY; // a copy: the chunk's buffer is reused
    this.chunkAt = end;
    return out.filter((p) => p.length > 0);
  }

  /** The held-back bytes, at the end of the stream. */
  end(): Buffer[] {
    const rest = this.replacement && this.tail.length ? [this.tail] : [];
    this.tail = EMPTY;
    return rest;
  }
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
