// The `hidden` count beside rg's answers (grep, find_files through rg): what the visibility rule left
// out below the searched folder, counted by latch's own walk by descriptors (find-index.ts, whose
// steady folders the host keeps, so a repeated count lists only what changed). Not rg's: rg walks by
// name, and while a folder is swapped for a link to outside it would count the secret-named entries
// there (review g60). Run beside rg, so it costs the call little time.
import type { Visibility } from "../policy/visibility.js";
import { DeepIgnoreChain, walkIndexed, type FolderIndex } from "./find-index.js";
import { makeDirCheck, type Resolve } from "./visible.js";

export interface HiddenCount {
  root: string;
  /** The folder rg searches or lists, resolved inside the root. */
  start: { abs: string; rel: string };
  visibility: Visibility;
  resolve: Resolve;
  signal: AbortSignal;
  /** The host's folder index. */
  index?: FolderIndex;
}

/** The count, or undefined past the .gitignore depth the walk takes (MAX_IGNORE_LAYERS): not counted then. */
export async function countHidden(c: HiddenCount): Promise<number | undefined> {
  const { resolve, ...w } = c;
  try {
    return (await walkIndexed({ ...w, allowDir: makeDirCheck(resolve), want: () => false, capLayers: true })).hidden;
  } catch (err) {
    if (err instanceof DeepIgnoreChain) return undefined;
    throw err;
  }
}
