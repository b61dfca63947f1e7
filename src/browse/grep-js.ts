// The JS grep engine: the same walk, filters and event stream as rg, in-process. Used when rg is
// missing or LATCH_GREP_ENGINE=js. Literal searches (linear by construction) run here, reading and
// matching synchronously between yields; a regex runs in a worker thread (grep-pool.ts), bounded per
// file and terminated on abort, so no pattern can stop the host from answering other calls.
// Every file is opened through its walked folder's descriptor (walk.ts `via`, src/fs/beneath.ts) as
// the walk yields it, and read through that descriptor here or in the worker, then closed.
import { closeSync } from "node:fs";
import { cancelled } from "../errors.js";
import { openFileBeneath } from "../fs/beneath.js";
import { makeMatcher, searchFile, type FileResult } from "./grep-match.js";
import { RegexSearch } from "./grep-pool.js";
import type { EngineRun } from "./grep-rg.js";
import { openEntry, walk } from "./walk.js";

/** The engine reads files synchronously into one reused buffer, and yields to the event loop this often (ms). */
const YIELD_EVERY_MS = 15;
const BUFFER_BYTES = 1 << 20;
/** Matching files whose resolver check may be pending at once (their hits are held meanwhile). */
const MAX_IN_FLIGHT = 256;
/** Files per batch sent to the regex worker, and batches queued there at once. */
const BATCH_FILES = 64;
const MAX_BATCHES = 2;

export async function runJs(run: EngineRun, allowDir: (rel: string) => Promise<boolean>): Promise<void> {
  const { query } = run;
  const matcher = makeMatcher(query); // a bad pattern is refused here, before any thread starts
  run.onStart();
  const regex = query.regex ? new RegexSearch(query, run.signal) : undefined;
  const scratch = regex ? undefined : Buffer.allocUnsafe(BUFFER_BYTES);
  const searcher: Searcher = regex
    ? (files) => regex.search(files)
    : (files) => files.map((f) => searchFile(f.fd, f.rel, f.room, matcher, query, scratch!));
  try {
    await search(run, allowDir, searcher, regex ? BATCH_FILES : 1);
  } finally {
    regex?.close();
  }
  if (run.signal.aborted) throw cancelled();
}

interface OpenFile {
  fd: number;
  rel: string;
  room: number;
}

type Searcher = (files: OpenFile[]) => (FileResult | undefined)[] | Promise<(FileResult | undefined)[]>;

async function search(
  run: EngineRun,
  allowDir: (rel: string) => Promise<boolean>,
  searcher: Searcher,
  batchSize: number,
): Promise<void> {
  const { target, collector } = run;
  // The resolver checks of matching files run side by side with the search; verdicts apply in order.
  let applied: Promise<void> = Promise.resolve();
  let inFlight = 0;
  /** Matches found, before their files' checks: what lets the walk stop without waiting for them. */
  let tentative = 0;
  let full = false;
  const apply = (results: (FileResult | undefined)[]): void => {
    for (const r of results) {
      if (!r) continue;
      tentative += r.hits.matches;
      const shown = run.visible(r.hits, r.kind === "binary");
      inFlight++;
      applied = applied.then(async () => {
        const ok = await shown;
        inFlight--;
        // Once enough is counted, later files (a batch searched past that point) count no more: rg
        // stops after the same file, so both engines give the same totals past the cap.
        if (!ok || full) return;
        if (r.kind === "binary") collector.binarySkipped++;
        else collector.add(r.hits);
        if (collector.enough()) full = collector.stopped = true;
      });
      applied.catch(() => undefined); // a failure surfaces at `await applied`, not as an unhandled rejection
    }
  };
  // Batches sent and not yet applied, oldest first; each applies its results when it is answered.
  const batches: Promise<void>[] = [];
  let batch: OpenFile[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    const closeAll = () => {
      for (const f of sent) closeSync(f.fd);
    };
    let out;
    try {
      out = searcher(sent);
    } catch (err) {
      closeAll();
      throw err;
    }
    if (Array.isArray(out)) {
      closeAll();
      return apply(out);
    }
    // Closed once the worker answered (or failed: a terminated worker's results are never applied).
    const p = out.finally(closeAll).then(apply);
    p.catch(() => undefined); // awaited below, in order
    batches.push(p);
    while (batches.length >= MAX_BATCHES) await batches.shift();
  };
  const drain = async (): Promise<void> => {
    await flush();
    while (batches.length > 0) await batches.shift();
    await applied;
  };
  if (target.isFile) {
    const fd = openFileBeneath(target);
    if (fd !== null) batch.push({ fd, rel: target.rel, room: collector.room() });
    return drain();
  }
  const prefix = target.rel === "." ? "" : target.rel + "/";
  let lastYield = performance.now();
  let files = 0;
  // The walk applies the visibility rule: a hidden file is never read, only counted.
  const counts = { seen: 0, ignored: 0, hidden: 0 };
  const walker = walk(
    { root: run.root, start: target, visibility: run.visibility, allowDir, signal: run.signal },
    counts,
  );
  try {
    for await (const e of walker) {
      if (e.kind !== "file" || !run.includes(e.rel.slice(prefix.length))) continue;
      const fd = openEntry(e);
      if (fd === null) continue; // gone, or no longer a file, since the folder was listed
      batch.push({ fd, rel: e.rel, room: collector.room() });
      if (batch.length >= batchSize) await flush();
      if (++files % 2000 === 0) run.progress(files);
      if (inFlight > MAX_IN_FLIGHT) await applied;
      // Reads here are synchronous (a cached small file costs a few syscalls, far less than a
      // thread-pool round trip); yield every few milliseconds so the host stays responsive.
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
      if (run.signal.aborted) break;
      if (collector.enough() || collector.countedEnough(tentative)) {
        collector.stopped = true;
        break;
      }
    }
  } catch (err) {
    for (const f of batch) closeSync(f.fd); // opened, never sent
    throw err;
  }
  collector.hidden += counts.hidden;
  await drain();
}
