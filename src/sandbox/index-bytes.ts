// An index file read where its parse asks, not whole. git skips an optional extension's payload, and
// so does latch: read whole, a call-made index of 2.3 GB (sparse: an extension of zeros git ignores)
// was past what one read may hold, the guard said `NOT checked`, and the repository it gitlinks went
// unjudged; one of 1.5 GB cost every later call 16 s of reading and hashing (review g50). Every read is
// recorded, so the same reads again tell whether anything the parse used has changed (git-index.ts's
// parse reads only where the bytes it read lead it).
import { createHash, type Hash } from "node:crypto";
import { readSync } from "node:fs";

/**
 * How much is read at once: FIRST where the parse jumps (an extension's header, an IEOT block), twice
 * as much each time it reads on from there, up to MOST (entries).
 */
const FIRST = 512;
const MOST = 256 * 1024;

/**
 * git maps the index and reads an entry that runs past its end from the zeros that fill the file's last
 * page (no bound in read-cache.c's entry reads: review g53, a last entry cut short, git read on, latch
 * refused the index). So does latch, to a 64 KiB page (the largest page size git runs on); past it
 * git's read faults.
 */
const PAGE = 64 * 1024;

/** The file was shorter than its size when read: it changed meanwhile (read it again). */
export class IndexChanged extends Error {
  constructor() {
    super("the index changed while latch read it");
  }
}

export class IndexBytes {
  private buf: Buffer = Buffer.alloc(0);
  private base = 0;
  private ahead = FIRST;
  private readonly hash: Hash | undefined;
  /** Each read, as offset then length: `sameAs` reads them again. */
  readonly reads: number[] = [];

  /** Where git's mapping ends: the size, up to its last page's end (the rest zeros). */
  readonly readable: number;

  private constructor(
    readonly size: number,
    private readonly fd: number | undefined,
    whole?: Buffer,
  ) {
    this.readable = Math.ceil(size / PAGE) * PAGE;
    if (whole !== undefined) this.buf = Buffer.concat([whole, Buffer.alloc(this.readable - size)]);
    this.hash = fd === undefined ? undefined : createHash("sha256");
  }

  /** A file's bytes, read as asked: `size` its fstat size. */
  static ofFile(fd: number, size: number): IndexBytes {
    return new IndexBytes(size, fd);
  }

  /** Bytes at hand (tests, and nothing to key). */
  static of(b: Buffer): IndexBytes {
    return new IndexBytes(b.length, undefined, b);
  }

  /**
   * The bytes from `at` to the end of what is at hand: at least `n` unless the mapping ends first (past
   * the file's size, zeros). Valid until the next call.
   */
  view(at: number, n: number): Buffer {
    const end = this.base + this.buf.length;
    if (at >= this.base && at + n <= end) return this.buf.subarray(at - this.base);
    if (this.fd === undefined || at >= this.readable) return this.buf.subarray(this.buf.length);
    // Reading on from what is at hand reads more each time; a jump starts small again.
    this.ahead = at >= this.base && at <= end ? Math.min(this.ahead * 2, MOST) : FIRST;
    const len = Math.min(Math.max(n, this.ahead), this.readable - at);
    const inFile = Math.max(0, Math.min(len, this.size - at));
    const got = readAt(this.fd, at, inFile);
    // Shorter than its size said: the file changed while read. Not kept: a later check that read nothing
    // there again would take the index for unchanged (review g51: a `link` unseen, and kept so).
    if (got.length < inFile) throw new IndexChanged();
    this.buf = inFile === len ? got : Buffer.concat([got, Buffer.alloc(len - inFile)]);
    this.base = at;
    this.reads.push(at, inFile);
    this.hash!.update(got);
    return this.buf;
  }

  /** What was read, as one hash: with `reads`, what `sameAs` compares. */
  digest(): string {
    return this.hash === undefined ? "" : this.hash.copy().digest("hex");
  }
}

/** Whether the file `fd` holds now what `reads` read, by `digest`. */
export function sameAs(fd: number, reads: number[], digest: string): boolean {
  const hash = createHash("sha256");
  for (let i = 0; i < reads.length; i += 2) {
    const got = readAt(fd, reads[i], reads[i + 1]);
    if (got.length !== reads[i + 1]) return false;
    hash.update(got);
  }
  return hash.digest("hex") === digest;
}

/** Up to `len` bytes at `at` (fewer where the file ends). */
function readAt(fd: number, at: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let n = 0;
  for (let got; n < len && (got = readSync(fd, buf, n, len - n, at + n)) > 0;) n += got;
  return buf.subarray(0, n);
}
