// UTF-8 over streams of chunks: whether a stream is well-formed (a character cut by a chunk edge
// included), and where a buffer's last complete character ends. The one copy, for streamed edits and
// process output alike.
import { isUtf8 } from "node:buffer";

const EMPTY = Buffer.alloc(0);

/** Whether a stream of chunks is well-formed UTF-8, a character cut by a chunk edge included. */
export class Utf8Check {
  ok = true;
  private carry: Buffer = EMPTY; // the start of a character cut by the last chunk's edge

  push(chunk: Buffer): void {
    if (!this.ok) return;
    let start = 0;
    if (this.carry.length) {
      // The cut character ends at the chunk's first byte that is not a continuation byte.
      while (start < chunk.length && start < 4 && (chunk[start] & 0xc0) === 0x80) start++;
      this.carry = Buffer.concat([this.carry, chunk.subarray(0, start)]);
      if (start === chunk.length && this.carry.length < 4) return; // the chunk may end inside it still
      if (!isUtf8(this.carry)) this.ok = false;
      this.carry = EMPTY;
    }
    const body = chunk.subarray(start);
    const cut = completeLength(body);
    if (!isUtf8(body.subarray(0, cut))) this.ok = false;
    this.carry = Buffer.from(body.subarray(cut));
  }

  end(): boolean {
    if (this.carry.length && !isUtf8(this.carry)) this.ok = false; // the stream ends inside a character
    return this.ok;
  }
}

/** The length of `b` without a trailing incomplete UTF-8 sequence (at most 3 bytes held back). */
export function completeLength(b: Buffer): number {
  for (let i = b.length - 1, k = 1; i >= 0 && k <= 4; i--, k++) {
    const c = b[i];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > k ? i : b.length;
  }
  return b.length;
}
