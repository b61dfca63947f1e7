// The regex worker: searches batches of files for a regex on its own thread, so a pattern that
// backtracks without end (such as `(a+)+$` on a long line) stalls only this thread, which the main
// thread can see (the shared file counter stops moving) and terminate. See grep-js.ts.
import { parentPort } from "node:worker_threads";
import type { GrepQuery } from "./grep-collect.js";
import { makeMatcher, searchFile, type FileResult, type Matcher } from "./grep-match.js";

export interface SearchBatch {
  query: GrepQuery;
  /** Each file open at `fd`, opened and closed by the main thread (descriptors are the process's, shared by its threads). */
  files: { fd: number; rel: string; room: number }[];
  /** Set on a worker's first batch of a run: slot 0 counts the files it has started. */
  started?: SharedArrayBuffer;
}

export type BatchAnswer =
  { ok: true; results: (FileResult | undefined)[] } | { ok: false; code?: string; message: string };

const BUFFER_BYTES = 1 << 20;
const scratch = Buffer.allocUnsafe(BUFFER_BYTES);
let counter: Int32Array | undefined;
let cached: { key: string; matcher: Matcher } | undefined;

function matcherFor(query: GrepQuery): Matcher {
  const key = JSON.stringify([query.pattern, query.regex, query.caseSensitive, query.multiline === true]);
  if (cached?.key !== key) cached = { key, matcher: makeMatcher(query) };
  return cached.matcher;
}

parentPort?.on("message", (batch: SearchBatch) => {
  if (batch.started) counter = new Int32Array(batch.started);
  let answer: BatchAnswer;
  try {
    const matcher = matcherFor(batch.query);
    const results = batch.files.map((f) => {
      if (counter) Atomics.add(counter, 0, 1);
      return searchFile(f.fd, f.rel, f.room, matcher, batch.query, scratch);
    });
    answer = { ok: true, results };
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    answer = { ok: false, code: typeof e.code === "string" ? e.code : undefined, message: String(e.message ?? err) };
  }
  parentPort!.postMessage(answer);
});
