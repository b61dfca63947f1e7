// Guards of one workspace that run at once (two contained calls, a call beside a background process)
// each take a baseline as they start, and one that starts while another's process has made something
// takes it for the user's: when the other's check removes it and the process makes it again, it keeps
// it (review g16: a `.git/commondir` made again, an exec line put back, ran at the user's plain `git
// status` or `--continue`). So the guards of a root share what any of them undid, each from its own
// start on: no baseline counts as there before what was undone after the guard began. A guard that
// began after the undo looked afresh, so what it saw (the user's, say) is its baseline as before.

/** Undos remembered per root; the oldest go first past this (a loop re-making one path adds no entry). */
const MAX_UNDOS = 4096;
/** Roots remembered; the one used longest ago goes first past this. */
const MAX_ROOTS = 256;

export class GuardShared {
  private seq = 0;
  /** Each undo's key (`rm:PATH`, `exec:TODO\0LINE`) with the sequence number it was done at. */
  private readonly undone = new Map<string, number>();

  /** A guard starts: its mark, before which no undo counts against its baseline. */
  mark(): number {
    return this.seq;
  }

  record(key: string): void {
    this.undone.delete(key);
    this.undone.set(key, ++this.seq);
    if (this.undone.size > MAX_UNDOS) this.undone.delete(this.undone.keys().next().value!);
  }

  /** Whether `key` was undone (by any guard of the root) after `mark`. */
  since(key: string, mark: number): boolean {
    const at = this.undone.get(key);
    return at !== undefined && at > mark;
  }
}

const byRoot = new Map<string, GuardShared>();

/** What the guards of `root` (a canonical path) share. */
export function sharedFor(root: string): GuardShared {
  const s = byRoot.get(root) ?? new GuardShared();
  byRoot.delete(root);
  byRoot.set(root, s);
  if (byRoot.size > MAX_ROOTS) byRoot.delete(byRoot.keys().next().value!);
  return s;
}
