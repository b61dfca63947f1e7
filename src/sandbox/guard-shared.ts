// Guards of one workspace that run at once (two contained calls, a call beside a background process)
// each take a baseline as they start, and one that starts while another's process has made something
// takes it for the user's: when the other's check removes it and the process makes it again, it keeps
// it (review g16: a `.git/commondir` made again, an exec line put back, ran at the user's plain `git
// status` or `--continue`). So the live guards of a root share what any of them undid: no baseline
// counts that as there before, once it is undone. It is let go when the last guard of the root ends,
// so the next call looks afresh at what the user did meanwhile.

/** Undos remembered while guards are live; the oldest go first past this (a loop re-making one path adds no entry). */
const MAX_UNDOS = 4096;

export class GuardShared {
  constructor(private readonly root: string) {}

  private seq = 0;
  private live = 0;
  /** Each undo's key (`rm:PATH`, `exec:TODO\0LINE`) with the sequence number it was done at. */
  private readonly undone = new Map<string, number>();

  /** A guard starts: its mark, before which no undo counts against its baseline. */
  begin(): number {
    this.live++;
    return this.seq;
  }

  /** A guard ends (its call checked, its background process gone). */
  end(): void {
    if (--this.live > 0) return;
    if (byRoot.get(this.root) === this) byRoot.delete(this.root); // the next guard starts afresh
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

/** The shared state of the guards of `root` (a canonical path); kept while any guard of it is live. */
export function sharedFor(root: string): GuardShared {
  let s = byRoot.get(root);
  if (!s) byRoot.set(root, (s = new GuardShared(root)));
  return s;
}
