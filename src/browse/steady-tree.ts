// Whether what ripgrep answered may stand. rg walks and reads by name, so a folder swapped for a link
// (or for another folder) while it runs can make it read elsewhere, outside the root or into a folder
// the rule hides; then any part of its answer (a line, a count, a binary match, a name, even a file
// left out) may tell of what it read there, whatever latch checks of each file afterwards (reviews g60,
// g61). So after rg exits latch walks the same tree by descriptors (find-index.ts, over the host's
// folder index: a repeated walk lists only what changed), and rg's answer stands only where no folder
// in it, nor above it, changed since before rg started: a ctime moves with every entry made, renamed
// or removed, and nobody can set one back, so each path rg read by name led where it leads now.
// rg reads its ignore rules by name too: a .gitignore it may read otherwise than latch (a link, a hard
// link, text that is not plain UTF-8) sets its answer aside the same way (review g62). Elsewhere the
// caller answers from latch's own walk. The same walk counts what the rule hid.
import type { Visibility } from "../policy/visibility.js";
import { BeneathLookup } from "./confirm.js";
import { showName } from "../fs/names.js";
import { walkIndexed, type FolderIndex } from "./find-index.js";
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
  /** What the rule hid below the start (a hidden folder once). */
  hidden: number;
  /** The regular files wanted (root-relative), as the walk found them. */
  files: string[];
  /**
   * Why rg's answer may not stand, said of the folder (undefined when it may): a folder changed since
   * `since` (the start, one above it, or one below), or holds a .gitignore rg may read otherwise (a
   * link, a hard link, text that is not plain UTF-8: gitignore.ts readIgnore), whose rules would then
   * be another file's (review g62).
   */
  setAside: SetAside | undefined;
}

/** Why rg's answer was set aside, and what would let it stand, for the messages that say so. */
export interface SetAside {
  said: string;
  fix: string;
}

/**
 * Walk `start` after rg exited; `since`: STEADY_MARGIN_MS before rg started (ms since the epoch). The
 * walk is not capped at some depth of nested .gitignore files: below a deep chain rg's answer could not
 * stand otherwise (review g62), and only a crafted tree holds one (2,000 nested files: ~50 s).
 */
export async function judgeTree(
  t: TreeWalk,
  since: number,
  want: (rel: string) => boolean = () => false,
): Promise<Judged> {
  const lookup = new BeneathLookup(t.root, since);
  let setAside: SetAside | undefined;
  try {
    // The folders above the start and the start itself, by lstat through their parents' descriptors
    // (a filesystem without steady ctimes, or no /proc, is never steady: the caller walks).
    if (!lookup.steadyFolder(t.start.rel)) setAside = changedFolder(t.start.rel);
  } finally {
    lookup.close();
  }
  const sinceNs = BigInt(Math.floor(since)) * 1_000_000n;
  const onFolder = (rel: string, ctimeNs: bigint, oddIgnore: boolean) => {
    if (setAside !== undefined) return;
    if (oddIgnore)
      setAside = {
        said: `\`${showName(rel === "." ? ".gitignore" : `${rel}/.gitignore`)}\` is one ripgrep may read otherwise than latch (a link, a hard link, or not plain UTF-8 text)`,
        fix: "Make it a plain UTF-8 file of its own",
      };
    else if (ctimeNs >= sinceNs) setAside = changedFolder(rel);
  };
  const { resolve, ...w } = t;
  const found = await walkIndexed({ ...w, allowDir: makeDirCheck(resolve), want, onFolder });
  return { ...found, setAside };
}

/** Why rg's answer is set aside when folder `rel` changed, as the caller's messages put it. */
export function changedFolder(rel: string): SetAside {
  return {
    said: `The folder \`${showName(rel)}\` changed in the last few seconds (before or while ripgrep searched)`,
    fix: "Retry once the folder has stood still for a few seconds",
  };
}
