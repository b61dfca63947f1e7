// Guards of one workspace that run at once (two contained calls, a call beside a background process)
// each take a baseline as they start, and one that starts while another's process runs may see what
// that process made and take it for the user's (review g16: a `.git/commondir` made again after the
// other's check removed it, an exec line put back; review g18: one the process removed itself first,
// a config rewritten by the other's check, ran at the user's plain `git status` or `--continue`). So
// while any guard of a root is live, the baseline of the one that began when none was (what the user
// had before any contained process of it ran) is every later one's too. When the last ends, the next
// looks afresh at what the user did meanwhile.

export class GuardShared<B> {
  private live = 0;
  private first: B | undefined;

  constructor(private readonly forget: () => void) {}

  /** A guard begins: the first live guard's baseline, or undefined when it is the first (then `settle` it). */
  enter(): B | undefined {
    this.live++;
    return this.first;
  }

  /** The first guard's baseline, once taken. */
  settle(base: B): void {
    this.first ??= base;
  }

  /** A guard ends (its call checked, its background process gone); each `enter` once. */
  end(): void {
    if (--this.live > 0) return;
    this.live = 0;
    this.first = undefined;
    this.forget();
  }
}

const byRoot = new Map<string, GuardShared<unknown>>();

/** What the live guards of `root` (a canonical path) share; let go when the last ends. */
export function sharedFor<B>(root: string): GuardShared<B> {
  let s = byRoot.get(root);
  if (!s) {
    const made: GuardShared<unknown> = new GuardShared(() => {
      if (byRoot.get(root) === made) byRoot.delete(root);
    });
    byRoot.set(root, (s = made));
  }
  return s as GuardShared<B>;
}
