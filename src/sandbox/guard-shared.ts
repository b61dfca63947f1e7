// Guards of one workspace that run at once (two contained calls, a call beside a background process)
// each take a baseline as they start, and one that starts while another's process runs may see what
// that process made and take it for the user's (review g16: a `.git/commondir` made again after the
// other's check removed it, an exec line put back; review g18: one the process removed itself first,
// a config rewritten by the other's check, ran at the user's plain `git status` or `--continue`). So
// while any guard of a root is live, the baseline of the one that began when none was (what the user
// had before any contained process of it ran) is every later one's too. When the last ends, the next
// looks afresh at what the user did meanwhile.
//
// A write of `.git/config` a person approved runs beside no other guard of the root, either way: git
// replaces the file (config.lock renamed over it), and that takes the read-only mount off it in every
// other live box (holds.ts; review g20: a background process then wrote `core.fsmonitor`).
import { Refusal } from "../errors.js";

export class GuardShared<B> {
  private live = 0;
  /** Of the live guards, those whose call writes `.git/config` with a person's approval. */
  private writers = 0;
  private first: B | undefined;

  constructor(private readonly forget: () => void) {}

  /**
   * A guard begins: the first live guard's baseline, or undefined when it is the first (then `settle`
   * it). `writesConfig`: its call writes `.git/config` with a person's approval. A Refusal (nothing
   * entered) when that cannot run beside the guards live now.
   */
  enter(writesConfig = false): B | undefined {
    if (writesConfig && this.live > 0)
      throw new Refusal(
        "Another contained process of this workspace is running (a background process, or another call's), and its " +
          "sandbox holds `.git/config` read-only; git replaces the file when it writes it, which would take that hold " +
          "off. Nothing ran.",
        "Stop the background processes of this workspace first (process_list shows them, process_kill stops one), or wait for them to end, then run this command again.",
      );
    if (!writesConfig && this.writers > 0)
      throw new Refusal(
        "A contained process of this workspace whose `.git/config` write a person approved is running (that call, or a " +
          "background process it started), and no other contained process may run beside it: git replaces the file, " +
          "which takes the sandbox's read-only hold on it off. Nothing ran.",
        "Run this command again once that one has ended (process_list shows background processes, process_kill stops one).",
      );
    this.live++;
    if (writesConfig) this.writers++;
    return this.first;
  }

  /** The first guard's baseline, once taken. */
  settle(base: B): void {
    this.first ??= base;
  }

  /** A guard ends (its call checked, its background process gone); each `enter` once, with its `writesConfig`. */
  end(writesConfig = false): void {
    if (writesConfig) this.writers = Math.max(0, this.writers - 1);
    if (--this.live > 0) return;
    this.live = 0;
    this.writers = 0;
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

const ownByRoot = new Map<string, Set<string>>();
/** Past this many, a root's set starts again: what falls out is judged as new below an aside. */
const MAX_OWN = 100_000;

/**
 * The entries (git folders, `.git` files, runs-later names: by holds.ts `identity`) a baseline of
 * `root` saw outside any entry the guard set aside, for this process's life: below one, only those
 * are the user's to a later baseline (guard.ts, reviews g25 and g26).
 */
export function usersOwn(root: string): Set<string> {
  let own = ownByRoot.get(root);
  if (!own || own.size > MAX_OWN) ownByRoot.set(root, (own = new Set()));
  return own;
}
