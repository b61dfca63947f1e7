// What a write shows people beside its result: the unified diff of the bytes it wrote, built by the
// same buildDiff as an approval (same context and caps), so a write that ran without a question
// (auto_edit) still leaves a readable change for the person. Display data never reaches the model;
// the host escapes hidden characters in it (src/host/pipeline.ts) before any transport sees it.
import { buildDiff, buildFilesDiff, type BuiltDiff, type PreviewFile } from "../edit/diff.js";
import type { MutationOutcome } from "../edit/mutate.js";
import type { ResolvedPath } from "../fs/paths.js";

export type WriteDisplay = Record<string, unknown> & { diff: string; diff_complete: boolean; diff_note?: string };

/** `note`: something the diff alone does not say, joined to the diff's own note. */
export function diffDisplay(d: BuiltDiff, note?: string): WriteDisplay {
  const notes = [d.note, note].filter((n) => n !== undefined);
  return {
    diff: d.diff ?? "",
    diff_complete: d.complete && d.diff !== undefined,
    ...(notes.length ? { diff_note: notes.join("; ") } : {}),
  };
}

/**
 * The diff of one file's mutation, from the bytes mutate() read and wrote under the lock, built
 * while its syncs run and kept for after: `during` is the write's Mutation.meanwhile, `after(out)`
 * the display (built then where `during` did not run: the content was unchanged). ~0.1 ms of an
 * edit's diff off the wait for its answer.
 */
export function displayWhileSyncing(target: ResolvedPath): {
  during: (before: Buffer | null, after: Buffer) => undefined;
  after: (out: MutationOutcome) => WriteDisplay;
} {
  const display = (before: Buffer | null, after: Buffer) => diffDisplay(buildDiff(target.rel, before, after));
  let built: WriteDisplay | undefined;
  return {
    during: (before, after) => {
      built = display(before, after);
    },
    after: (out) => built ?? display(out.before, out.after),
  };
}

/** The diff of a change to several files, one section per file. */
export function filesDisplay(files: PreviewFile[]): WriteDisplay {
  return diffDisplay(buildFilesDiff(files));
}

/** A write that kept no content (a streamed edit of a large file): say why there is no diff. */
export function noDiffDisplay(note: string): WriteDisplay {
  return { diff: "", diff_complete: false, diff_note: note };
}
