// What a box holds by a mount on a path of the host: a secret or denied path masked (/dev/null, an
// empty tmpfs), a control file kept read-only (`.git/config`, `.envrc`, a hooks folder), a folder kept
// in place. Such a mount sits on the path's entry as it was when the box started, and when something
// outside the box renames another file over that entry or removes it (an editor's save, git's
// `config.lock`, the user's `mv`), the kernel detaches the mounts on it in every other mount namespace:
// the box then sees the new file as it is, readable or writable (review g20: the user's `git config`
// let a background process write `core.fsmonitor`). Nothing inside the box can do this (a mount point
// cannot be renamed or removed there: EBUSY), so a hold is lost only from outside, and latch can only
// see it afterwards: each box's mount points are noted by identity as it starts, and a path whose
// entry is another now has lost its hold. The processes of a box that lost one are killed at once
// (a call's watch below, a background process's guard watch: shell/background.ts; an attached server:
// gateway/stdio.ts), the loss is reported, and a lost git config has its program keys put back (guard.ts).
import { lstatSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { isInside } from "../fs/paths.js";
import { osPath, showName } from "../fs/names.js";
import { realpathOf } from "../fs/realpath.js";
import type { Undone } from "./guard.js";

/**
 * `fn` at once, and then at most once per `ms`: a look after the first event of a burst runs at once (a
 * lost mount is acted on before a loop can write on), the rest of the burst gets one more at its end. A
 * process renaming a folder in a loop made 10,000 events a second, and a look on each starved the
 * server (the race test's swapper).
 */
export function atMostEvery(ms: number, fn: () => void): () => void {
  let last = 0;
  let later: NodeJS.Timeout | undefined;
  return () => {
    const now = performance.now();
    if (now - last >= ms) {
      last = now;
      fn();
    } else
      later ??= setTimeout(() => {
        later = undefined;
        last = performance.now();
        fn();
      }, ms);
  };
}

/** bwrap's options that take arguments, by count; any other option (`--unshare-net`) takes none. */
const ARITY: Readonly<Record<string, number>> = {
  "--bind": 2,
  "--ro-bind": 2,
  "--bind-try": 2,
  "--ro-bind-try": 2,
  "--dev-bind": 2,
  "--symlink": 2,
  "--setenv": 2,
  "--tmpfs": 1,
  "--dev": 1,
  "--proc": 1,
  "--dir": 1,
  "--remount-ro": 1,
  "--perms": 1,
  "--chdir": 1,
  "--seccomp": 1,
  "--cap-drop": 1,
  "--cap-add": 1,
  "--unsetenv": 1,
};

/** A watch's looks on events, at most this often (atMostEvery). */
export const LOOK_EVERY_MS = 5;

/** What every box mounts afresh: never the host's entries. */
const OWN = new Set(["/", "/dev", "/proc", "/tmp"]);

/**
 * The host paths a bwrap command line mounts something on, in order, before its `--`: what a rename
 * outside can take away. A path inside a tmpfs the box made is the box's own entry, not the host's.
 */
export function mountPoints(args: readonly string[]): string[] {
  const out: string[] = [];
  const tmpfs: string[] = [];
  const boxOwn = (p: string) => OWN.has(p) || tmpfs.some((t) => p.startsWith(t + "/"));
  for (let i = 0; i < args.length;) {
    const opt = args[i];
    if (opt === "--") break;
    if (!opt.startsWith("--")) throw new Error(`bwrap argument ${JSON.stringify(opt)} where an option was expected`);
    const n = ARITY[opt] ?? 0;
    const dest =
      opt === "--tmpfs" || opt === "--dir" ? args[i + 1] : /bind$|bind-try$/.test(opt) ? args[i + 2] : undefined;
    if (dest !== undefined && !boxOwn(dest)) out.push(dest);
    if (opt === "--tmpfs") tmpfs.push(args[i + 1]);
    i += 1 + n;
  }
  return out;
}

/**
 * The entry at `p` itself by `dev:ino` and birth time, or "" when there is none (or none latch can see;
 * with `dirs`, none that is a folder). The birth time: an entry made again at once (the guard's own
 * restore of a config, a folder removed and made again: review g15) often gets the inode number the
 * one before freed. The one identity the guard's watch, the held links and the holds compare.
 */
export function identity(p: string, dirs = false): string {
  try {
    const st = lstatSync(osPath(p), { bigint: true });
    return dirs && !st.isDirectory() ? "" : `${st.dev}:${st.ino}:${st.birthtimeNs}`;
  } catch {
    return "";
  }
}

/**
 * A mount point as the box started: where the mount sits (a link's target: mount(2) follows a link
 * at the mount point, review g21: `.git/config` a link to a shared file), that entry and the folder
 * it is in (both by identity).
 */
interface Noted {
  at: string;
  id: string;
  folder: string;
}

/**
 * Where a mount on `p` sits: `p`, or for a link its target (or the link itself when it leads nowhere:
 * then no mount was made). The masks' paths come from walks that pass no link, so only `p` is looked at.
 */
function mountedAt(p: string): string {
  try {
    return lstatSync(osPath(p)).isSymbolicLink() ? realpathOf(p) : p;
  } catch {
    return p;
  }
}

/** One box's mount points; `release` once its processes have all ended. */
export interface Held {
  release(): void;
}

/** A call's (and its background process's) boxes: what each holds, and which holds were lost. */
export class MountHolds {
  /** `root`: the workspace, whose own mount is left out (moving the workspace moves the box's mount with it). */
  constructor(private readonly root: string) {}

  private readonly live = new Set<Map<string, Noted>>();
  /** Lost while a box that has ended held them: still said at the call's check. */
  private readonly lostBefore = new Set<string>();

  /** A call's watch (`watch`): the folders watched, and what it does on a loss. */
  private watching?: { look: () => void; watchers: Map<string, FSWatcher> };

  /**
   * While a foreground call runs: `onLost` at the first loss seen, at once on a change in a folder of
   * the workspace holding a mount point (those of boxes started later too), or within `pollMs`. The
   * returned function ends it.
   */
  watch(onLost: (lost: string[]) => void, pollMs = 200): () => void {
    let said = false;
    const look = () => {
      if (said) return;
      const lost = this.lost();
      if (lost.length === 0) return;
      said = true;
      onLost(lost);
    };
    this.watching = { look: atMostEvery(LOOK_EVERY_MS, look), watchers: new Map() };
    this.watchMore();
    const timer = setInterval(look, pollMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      for (const w of this.watching?.watchers.values() ?? []) w.close();
      this.watching = undefined;
    };
  }

  private watchMore(): void {
    const w = this.watching;
    if (!w) return;
    for (const folder of this.folders()) {
      if (w.watchers.has(folder)) continue;
      try {
        const watcher = watch(osPath(folder), { persistent: false }, w.look);
        watcher.on("error", () => undefined); // the timer still looks
        w.watchers.set(folder, watcher);
      } catch {
        // gone, or no inotify watch left: the timer still looks
      }
    }
  }

  /** A box starts with this command line: its mount points' identities, now. */
  take(args: readonly string[]): Held {
    const held = new Map<string, Noted>();
    for (const p of mountPoints(args)) {
      if (p === this.root || held.has(p)) continue;
      const at = mountedAt(p);
      held.set(p, { at, id: identity(at), folder: identity(path.dirname(at)) });
    }
    this.live.add(held);
    this.watchMore();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        for (const p of lostIn(held)) this.lostBefore.add(p);
        this.live.delete(held);
      },
    };
  }

  /** Does a live box of the call hold `p` by a mount now (the mount point, or where a link there leads)? */
  holds(p: string): boolean {
    for (const held of this.live) for (const [at, n] of held) if ((at === p || n.at === p) && !isLost(n)) return true;
    return false;
  }

  /** The paths whose mount some box of this call lost (their entry is another now, or gone), sorted. */
  lost(): string[] {
    const out = new Set(this.lostBefore);
    for (const held of this.live) for (const p of lostIn(held)) out.add(p);
    return [...out].sort();
  }

  /**
   * The folders in the workspace holding what the live boxes hold, for a watch (a rename there is an event
   * there). Those outside (credential stores, what only root may read) wait for the timer's check:
   * a watch on /etc or /var/log would run a check at every line a log gets.
   */
  folders(): string[] {
    const out = new Set<string>();
    for (const held of this.live)
      for (const n of held.values()) if (isInside(this.root, n.at)) out.add(path.dirname(n.at));
    return [...out].sort();
  }
}

/**
 * The paths whose entry is another now (or none) in the folder that held it. A folder moved away with
 * its mount points (the box can move a folder holding a nested repository's git folder) takes them
 * along, held as they were: what is at the old path then is new, the guard's to judge (guard.ts), not
 * a lost hold.
 */
function lostIn(held: ReadonlyMap<string, Noted>): string[] {
  return [...held].filter(([, n]) => isLost(n)).map(([p]) => p);
}

function isLost(n: Noted): boolean {
  return identity(n.at) !== n.id && identity(path.dirname(n.at)) === n.folder;
}

/** What a lost hold means, said once per path (a workspace path relative to `root`). */
const LOST_HOLD =
  "NOT held: replaced or removed outside the sandbox while a contained process ran (an editor's save, git's lock " +
  "file, a command of the user's), which takes the sandbox's mount off it: from then on the process could read it " +
  "(a secret's mask) or write it (a file kept read-only). Look at what it holds now before git, a shell or an editor uses it";

export function lostReport(holds: MountHolds | undefined, root: string): Undone[] {
  return (holds?.lost() ?? []).map((p) => ({
    path: isInside(root, p) ? showName(path.relative(root, p) || ".") : showName(p),
    what: LOST_HOLD,
  }));
}
