// find_files: the walk, filtered by a glob, sorted, capped; every match checked by the resolver.
import { makeGlob } from "./glob.js";
import { makeDirCheck, makeFoundCheck, type Resolve } from "./visible.js";
import { comparePaths, walk } from "./walk.js";

export interface FindRequest {
  root: string;
  start: { abs: string; rel: string };
  pattern: string;
  max: number;
  deniedSubstrings: readonly string[];
  controlPlane: readonly string[];
  resolve: Resolve;
  signal: AbortSignal;
  onProgress(seen: number): void;
}

export async function findFiles(req: FindRequest): Promise<{ matches: string[]; count: number; truncated: boolean }> {
  const glob = makeGlob(req.pattern);
  const visible = makeFoundCheck(req.root, req.controlPlane, req.deniedSubstrings);
  const prefix = req.start.rel === "." ? "" : req.start.rel + "/";
  const found: string[] = [];
  const walker = walk({
    root: req.root,
    start: req.start,
    deniedSubstrings: req.deniedSubstrings,
    allowDir: makeDirCheck(req.resolve),
    signal: req.signal,
    onProgress: req.onProgress,
  });
  const candidates: string[] = [];
  for await (const e of walker) {
    if (e.kind === "file" && glob(e.rel.slice(prefix.length))) candidates.push(e.rel);
  }
  // Every match is checked (control-plane files, links), several at a time.
  const shown = await mapLimit(candidates, 16, async (rel) => ((await visible(rel)) ? rel : undefined));
  for (const rel of shown) if (rel !== undefined) found.push(rel);
  found.sort(comparePaths);
  return { matches: found.slice(0, req.max), count: found.length, truncated: found.length > req.max };
}

async function mapLimit<T, R>(items: T[], limit: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
