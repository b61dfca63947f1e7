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
import { identity } from "./holds.js";

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

const gitDirsByRoot = new Map<string, Map<string, string>>();

/**
 * The git folders a baseline of `root` saw as the user's (path to holds.ts `identity`), for this
 * process's life. Each is a git folder to every later box and baseline while it is the same folder,
 * whatever it holds (`withUsersGitDirs`). None can move in a box (bwrap.ts pins the folders above one),
 * so the path still names it.
 */
export function usersGitDirs(root: string): Map<string, string> {
  let dirs = gitDirsByRoot.get(root);
  if (!dirs || dirs.size > MAX_OWN) gitDirsByRoot.set(root, (dirs = new Map<string, string>()));
  return dirs;
}

/**
 * `found` (a walk's git folders) and the user's (`usersGitDirs`) that are the same folders still. Review
 * g28: a call renamed a submodule's or a bare repository's `HEAD` and `objects` away, a box started later
 * took the folder for a plain one, its config got `core.fsmonitor` (its hooks a `pre-receive`), and
 * `HEAD` went back; the guard then took the user's `HEAD` for one the call made.
 */
export function withUsersGitDirs(root: string, found: readonly string[]): string[] {
  const out = new Set(found);
  for (const [g, id] of usersGitDirs(root)) if (!out.has(g) && identity(g, true) === id) out.add(g);
  return [...out];
}
