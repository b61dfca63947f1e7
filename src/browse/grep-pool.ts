// The regex worker's client: one RegexSearch per grep call, over a worker thread taken from a small
// idle pool (a thread costs tens of ms to start). A runaway pattern never blocks the main thread:
// the worker's shared file counter is watched, and a file whose search runs past REGEX_FILE_MS ends
// the call with ETIMEDOUT and the worker is terminated (V8 interrupts a running RegExp for that).
// An aborted call terminates it the same way.
import type { Worker } from "node:worker_threads";
import { startWorker } from "../worker-thread.js";
import { cancelled, ioCode, ToolError } from "../errors.js";
import type { GrepQuery } from "./grep-collect.js";
import type { FileResult } from "./grep-match.js";
import type { BatchAnswer, SearchBatch } from "./grep-worker.js";

/** How long one file's regex search may run before the call ends with ETIMEDOUT (ms). */
const REGEX_FILE_MS = 5000;
const POLL_MS = 100;
/** Idle workers kept for the next call; unref'd, so they never hold the process open. */
const MAX_IDLE = 1;
const idle: Worker[] = [];

function spawnWorker(): Worker {
  const w = startWorker(import.meta.url, "grep-worker");
  w.once("exit", () => {
    const i = idle.indexOf(w);
    if (i !== -1) idle.splice(i, 1);
  });
  return w;
}

function takeWorker(): Worker {
  const w = idle.pop() ?? spawnWorker();
  w.ref();
  return w;
}

function giveBack(w: Worker): void {
  if (idle.length >= MAX_IDLE) {
    void w.terminate();
    return;
  }
  w.unref();
  idle.push(w);
}

interface Pending {
  resolve(results: (FileResult | undefined)[]): void;
  reject(err: Error): void;
}

/** One call's regex search: batches go to one worker in order and are answered in order. */
export class RegexSearch {
  private readonly worker = takeWorker();
  private readonly counter = new Int32Array(new SharedArrayBuffer(4));
  private readonly sent: string[] = [];
  private readonly queue: Pending[] = [];
  private failure: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastCount = 0;
  private lastMove = 0;
  private shared = false;

  constructor(
    private readonly query: GrepQuery,
    private readonly signal: AbortSignal,
  ) {
    this.worker.on("message", this.onMessage);
    this.worker.on("error", this.onError);
    this.worker.on("exit", this.onExit);
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  search(files: SearchBatch["files"]): Promise<(FileResult | undefined)[]> {
    if (this.failure) return Promise.reject(this.failure);
    const batch: SearchBatch = { query: this.query, files };
    if (!this.shared) {
      batch.started = this.counter.buffer;
      this.shared = true;
    }
    for (const f of files) this.sent.push(f.rel);
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      this.worker.postMessage(batch);
      if (!this.timer) {
        this.lastMove = performance.now();
        this.timer = setInterval(this.watch, POLL_MS);
      }
    });
  }

  /** Ends the search: the worker goes back to the pool if it is healthy and idle. */
  close(): void {
    this.signal.removeEventListener("abort", this.onAbort);
    this.stopTimer();
    this.worker.off("message", this.onMessage);
    this.worker.off("error", this.onError);
    this.worker.off("exit", this.onExit);
    if (this.failure || this.queue.length > 0) {
      this.fail(cancelled());
      return;
    }
    giveBack(this.worker); // the next call shares its own counter with its first batch
  }

  private readonly onMessage = (answer: BatchAnswer): void => {
    const p = this.queue.shift();
    if (!p) return;
    if (this.queue.length === 0) this.stopTimer();
    if (answer.ok) p.resolve(answer.results);
    else this.fail(new ToolError(ioCode(answer.code), answer.message));
  };

  private readonly onError = (err: Error): void => {
    this.fail(
      new ToolError("EIO", `The regex search thread failed: ${err.message}. Retry; if it persists, use the rg engine.`),
    );
  };

  private readonly onExit = (): void => {
    this.fail(
      new ToolError("EIO", "The regex search thread stopped unexpectedly. Retry; if it persists, use the rg engine."),
    );
  };

  private readonly onAbort = (): void => this.fail(cancelled());

  private readonly watch = (): void => {
    const count = Atomics.load(this.counter, 0);
    const now = performance.now();
    if (count !== this.lastCount) {
      this.lastCount = count;
      this.lastMove = now;
    } else if (now - this.lastMove > REGEX_FILE_MS) {
      this.fail(runaway(this.query.pattern, this.sent[count - 1] ?? this.sent[0] ?? "a file"));
    }
  };

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.stopTimer();
    this.worker.off("exit", this.onExit);
    void this.worker.terminate();
    for (const p of this.queue.splice(0)) p.reject(err);
  }
}

function runaway(pattern: string, file: string): ToolError {
  const shown = pattern.length > 120 ? `${pattern.slice(0, 120)}…` : pattern;
  return new ToolError(
    "ETIMEDOUT",
    `The regex \`${shown}\` ran for over ${REGEX_FILE_MS / 1000} s on ${file} without finishing, so the search was stopped; nothing was changed. ` +
      "Such a pattern backtracks without end on some lines (nested or overlapping repeats, such as `(a+)+$`). " +
      "Simplify the pattern (one repeat per part, anchors, a literal), or use the rg engine (install ripgrep, unset LATCH_GREP_ENGINE=js), which matches in linear time.",
  );
}
