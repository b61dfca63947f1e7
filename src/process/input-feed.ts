// A background process's standard input. Text queued here goes to the pipe one chunk at a time, the
// next only once the pipe took the last, so latch never holds more than the caller let it queue, and
// can say how many bytes the process actually took (a queued byte was not "written" to anyone).
import type { Writable } from "node:stream";

/** One write to the pipe: the grain at which `taken` is exact (a chunk half taken counts as not taken). */
const CHUNK = 16 * 1024;

export class InputFeed {
  private target: Writable | undefined;
  private readonly queue: Buffer[] = [];
  private held = 0;
  private took = 0;
  private writing = false;
  private ended = false;
  private readonly waiters = new Set<() => void>();

  /** Bytes the pipe accepted so far. */
  get taken(): number {
    return this.took;
  }

  /** Bytes latch holds for the process that it has not taken yet (the chunk being written included). */
  get queued(): number {
    return this.held;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The child's stdin, once its step starts (exec.ts). */
  attach(target: Writable): void {
    if (this.ended) {
      target.destroy();
      return;
    }
    this.target = target;
    target.once("close", () => this.close());
    this.pump();
  }

  write(bytes: Buffer): void {
    if (this.ended || bytes.length === 0) return;
    this.queue.push(bytes);
    this.held += bytes.length;
    this.pump();
  }

  /** Resolves once `done()` holds, the feed has ended, or `ms` have passed. */
  async waitUntil(done: () => boolean, ms: number): Promise<void> {
    if (done() || this.ended || ms <= 0) return;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (!done() && !this.ended) return;
        finish();
      };
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(check);
    });
  }

  /** No more input: what is queued is dropped, and the pipe is closed (the process reads end of file). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.held = 0;
    this.target?.destroy();
    this.notify();
  }

  private pump(): void {
    const target = this.target;
    if (!target || this.writing || this.ended || this.queue.length === 0) return;
    const head = this.queue[0];
    const chunk = head.subarray(0, CHUNK);
    if (chunk.length === head.length) this.queue.shift();
    else this.queue[0] = head.subarray(CHUNK);
    this.writing = true;
    target.write(chunk, (err) => {
      this.writing = false;
      if (err) return this.close(); // the process closed its stdin or ended
      this.took += chunk.length;
      if (!this.ended) this.held -= chunk.length; // close() already let go of the rest
      this.notify();
      this.pump();
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
