// find_files: the walk, filtered by a glob, sorted, capped; every match checked by the resolver.
import { makeGlob } from "./glob.js";
import { makeDirCheck, makeVisibility, type Resolve } from "./visible.js";
import { comparePaths, walk } from "./walk.js";

export interface FindRequest {
  root: string;
  start: { abs: string; rel: string };
  pattern: string;
  max: number;
  deniedSubstrings: readonly string[];
  resolve: Resolve;
  signal: AbortSignal;
  onProgress(seen: number): void;
}

export async function findFiles(req: FindRequest): Promise<{ matches: string[]; count: number; truncated: boolean }> {
  const glob = makeGlob(req.pattern);
  const visible = makeVisibility(req.resolve);
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
  for await (const e of walker) {
    if (e.kind !== "file" || !glob(e.rel.slice(prefix.length))) continue;
    if (await visible(e.rel)) found.push(e.rel);
  }
  found.sort(comparePaths);
  return { matches: found.slice(0, req.max), count: found.length, truncated: found.length > req.max };
}
