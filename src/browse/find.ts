// find_files: the files of the in-process walk over the host's folder index (find-index.ts), filtered
// by the glob, sorted, capped. One engine: LATCH_GREP_ENGINE picks grep's, not this.
import type { Visibility } from "../policy/visibility.js";
import { walkIndexed, type FolderIndex } from "./find-index.js";
import { makeGlob } from "./glob.js";
import { makeDirCheck, type Resolve } from "./visible.js";
import { comparePaths } from "./walk.js";

export interface FindRequest {
  root: string;
  start: { abs: string; rel: string };
  pattern: string;
  max: number;
  /** The one visibility rule: hidden files are neither listed nor counted by name, only in `hidden`. */
  visibility: Visibility;
  resolve: Resolve;
  signal: AbortSignal;
  onProgress: (seen: number) => void;
  /** The host's folder index: what earlier walks found in folders that have not changed since. */
  index?: FolderIndex;
}

export interface FindAnswer {
  matches: string[];
  count: number;
  truncated: boolean;
  /** Entries the visibility rule left out (a hidden folder counts once). */
  hidden: number;
}

export async function findFiles(req: FindRequest): Promise<FindAnswer> {
  const glob = makeGlob(req.pattern);
  const prefix = req.start.rel === "." ? "" : req.start.rel + "/";
  // A folder hidden by the rule shows nothing; one inside a gitignored folder neither, which the walk
  // finds from the .gitignore files above its start, read once.
  if (underHiddenFolder(req.visibility, req.start.rel)) return answer(req, [], 0);
  // Each file the walk shows is inside the root now, a regular file, and not hidden (find-index.ts).
  // Not capped at some depth of nested .gitignore files: a crafted chain costs the walk the cube of
  // its depth (2,000 nested files: ~50 s), but there is no cheaper way to answer (rg's list would
  // stand only after this same walk, as grep's does: steady-tree.ts); the walk lets other calls run
  // between folders and stops when the call is cancelled.
  const { files, hidden } = await walkIndexed({
    root: req.root,
    start: req.start,
    visibility: req.visibility,
    allowDir: makeDirCheck(req.resolve),
    want: (rel) => glob(rel.slice(prefix.length)),
    signal: req.signal,
    onProgress: req.onProgress,
    index: req.index,
  });
  return answer(req, files.sort(comparePaths), hidden);
}

function answer(req: FindRequest, found: string[], hidden: number): FindAnswer {
  return {
    matches: found.slice(0, req.max),
    count: found.length,
    truncated: found.length > req.max,
    hidden,
  };
}

/** Whether the start folder or one above it is hidden by the rule: then nothing below it is shown. */
function underHiddenFolder(visibility: Visibility, startRel: string): boolean {
  if (startRel === ".") return false;
  const parts = startRel.split("/");
  for (let i = 1; i <= parts.length; i++) if (visibility.hides(parts.slice(0, i).join("/"), true)) return true;
  return false;
}
