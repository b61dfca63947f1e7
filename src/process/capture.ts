// Output sinks for bounded processes. HeadTail keeps the first and last halves of a stream and
// drops the middle while the pipe keeps draining, so a gigabyte costs no memory and never blocks the
// child. Strict keeps everything up to a limit and reports when it is crossed. Both check UTF-8.
import { completeLength, Utf8Check } from "../fs/utf8.js";

export interface Sink {
  /** Take a chunk; false means the sink's limit is crossed and the process should be stopped. */
  write(chunk: Buffer): boolean;
}

export interface Captured {
  text: string;
  /** Bytes the child wrote. */
  bytes: number;
  /** Bytes left out of `text`. */
  cut: number;
  invalidUtf8: boolean;
}

export class HeadTailCapture implements Sink {
  protected head: Buffer[] = [];
  protected headBytes = 0;
  protected tail: Buffer[] = [];
  protected tailBytes = 0;
  /** Bytes written so far. */
  total = 0;
  private utf8 = new Utf8Check();
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(
    private readonly limit: number,
    private readonly label: string,
    headLimit = Math.floor(limit / 2),
  ) {
    this.headLimit = headLimit;
    this.tailLimit = limit - this.headLimit;
  }

  write(chunk: Buffer): boolean {
    this.total += chunk.length;
    this.utf8.push(chunk);
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      this.tail.push(rest); // each read is its own buffer, so keeping a few costs only their size
      this.tailBytes += rest.length;
      while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= this.tailLimit)
        this.tailBytes -= this.tail.shift()!.length;
    }
    return true;
  }

  result(): Captured {
    const invalidUtf8 = !this.utf8.end();
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (this.total <= this.limit)
      return { text: Buffer.concat([head, tail]).toString("utf8"), bytes: this.total, cut: 0, invalidUtf8 };
    tail = tail.subarray(tail.length - this.tailLimit);
    // Cut at character boundaries so the halves do not start or end with half a character.
    const headText = head.subarray(0, completeLength(head)).toString("utf8");
    let start = 0;
    while (start < 3 && start < tail.length && (tail[start] & 0xc0) === 0x80) start++;
    const cut = this.total - head.length - tail.length;
    const marker = `\n[… latch cut ${cut} bytes from the middle of ${this.label} (limit ${this.limit} bytes) …]\n`;
    return { text: headText + marker + tail.subarray(start).toString("utf8"), bytes: this.total, cut, invalidUtf8 };
  }
}

export class StrictCapture implements Sink {
  private chunks: Buffer[] = [];
  bytes = 0;
  over = false;
  private utf8 = new Utf8Check();

  constructor(private readonly limit: number) {}

  write(chunk: Buffer): boolean {
    if (this.over) return false;
    this.bytes += chunk.length;
    if (this.bytes > this.limit) {
      this.over = true;
      this.chunks = [];
      return false;
    }
    this.chunks.push(Buffer.from(chunk));
    this.utf8.push(chunk);
    return true;
  }

  result(): Captured {
    const invalidUtf8 = !this.utf8.end();
    return { text: Buffer.concat(this.chunks).toString("utf8"), bytes: this.bytes, cut: 0, invalidUtf8 };
  }
}
