// The source files under a folder, for AST search: the browse tools' walk (sorted, never through a
// symlink, skipping .git, node_modules, gitignored entries and what the visibility rule hides, folders refused by
// the resolver), filtered to files of a known language that the resolver shows. It stops when the
// call's budget is spent, between entries, rather than throwing: a stopped search still answers.
// The walk lists each folder through its descriptor; the files are read later (search.ts), each
// through the walk from the root by descriptors (readSource), so neither step follows a swapped link.
import type { ResolvedPath } from "../fs/paths.js";
import { makeDirCheck, makeVisibility } from "../browse/visible.js";
import type { Visibility } from "../policy/visibility.js";
import { walk, type WalkCounts } from "../browse/walk.js";
import type { Budget } from "./budget.js";

export interface SourceWalk {
  root: string;
  start: { abs: string; rel: string };
  /** The one visibility rule: hidden entries are neither searched nor named, only counted. */
  visibility: Pick<Visibility, "hides">;
  /** Filled in as the walk goes. */
  counts: WalkCounts;
  /** The one resolver: a refused path is left out. */
  resolve: (rel: string) => Promise<ResolvedPath>;
  /** Which files to yield (by root-relative path). */
  wanted(rel: string): boolean;
  budget: Budget;
}

export async function* walkSources(w: SourceWalk): AsyncGenerator<{ abs: string; rel: string }> {
  const visible = makeVisibility(w.resolve);
  const entries = walk(
    {
      root: w.root,
      start: w.start,
      visibility: w.visibility,
      allowDir: makeDirCheck(w.resolve),
    },
    w.counts,
  );
  for await (const e of entries) {
    if (w.budget.spent()) return; // leaving the loop closes the walk
    if (e.kind !== "file" || !w.wanted(e.rel)) continue;
    if ((await visible(e.rel))?.rel === e.rel) yield { abs: e.abs, rel: e.rel };
  }
}
