// Whether what ripgrep answered may stand. rg walks and reads by name, so a folder swapped for a link
// (or for another folder) while it runs can make it read elsewhere, outside the root or into a folder
// the rule hides; then any part of its answer (a line, a count, a binary match, a name, even a file
// left out) may tell of what it read there, whatever latch checks of each file afterwards (reviews g60,
// g61). So after rg exits latch walks the same tree by descriptors (find-index.ts, over the host's
// folder index: a repeated walk lists only what changed), and rg's answer stands only where no folder
// in it, nor above it, changed since before rg started: a ctime moves with every entry made, renamed
// or removed, and nobody can set one back, so each path rg read by name led where it leads now.
// Elsewhere the caller answers from latch's own walk. The same walk counts what the rule hid.
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup } from "./confirm.js";
import { DeepIgnoreChain, walkIndexed, type FolderIndex } from "./find-index.js";
import { makeDirCheck, type Resolve } from "./visible.js";

export interface TreeWalk {
  root: string;
  /** The folder rg searched or listed, resolved inside the root. */
  start: { abs: string; rel: string };
  visibility: Visibility;
  resolve: Resolve;
  signal: AbortSignal;
  /** The host's folder index. */
  index?: FolderIndex;
}

export interface Judged {
  /** What the rule hid below the start (a hidden folder once); undefined when not walked. */
  hidden: number | undefined;
  /** The regular files wanted (root-relative), as the walk found them. */
  files: string[];
  /**
   * A folder that changed since `since` (the start or one above it, or one below): rg's answer may not
   * stand. Undefined when none did, or when the tree could not be walked (past the .gitignore depth the
   * walk takes, MAX_IGNORE_LAYERS: there each file rg names is still confirmed, confirm.ts).
   */
  changed: string | undefined;
}

/** Walk `start` after rg exited; `since`: STEADY_MARGIN_MS before rg started (ms since the epoch). */
export async function judgeTree(
  t: TreeWalk,
  since: number,
  want: (rel: string) => boolean = () => false,
): Promise<Judged> {
  const lookup = new BeneathLookup(t.root, since);
  let changed: string | undefined;
  try {
    // The folders above the start and the start itself, by lstat through their parents' descriptors
    // (a filesystem without steady ctimes, or no /proc, is never steady: the caller walks).
    if (!lookup.steadyFolder(t.start.rel)) changed = t.start.rel;
  } finally {
    lookup.close();
  }
  const sinceNs = BigInt(Math.floor(since)) * 1_000_000n;
  const onFolder = (rel: string, ctimeNs: bigint) => {
    if (changed === undefined && ctimeNs >= sinceNs) changed = rel;
  };
  const { resolve, ...w } = t;
  try {
    const found = await walkIndexed({ ...w, allowDir: makeDirCheck(resolve), want, capLayers: true, onFolder });
    return { ...found, changed };
  } catch (err) {
    if (err instanceof DeepIgnoreChain) return { hidden: undefined, files: [], changed };
    throw err;
  }
}
