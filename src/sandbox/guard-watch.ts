// A background process runs on between the model's calls, and what it makes meanwhile (a new
// `.git/commondir` naming a config of its own, a hook where there were none) runs at the user's next
// git command, which an editor makes on its own every few seconds. Its guard (guard.ts) is checked
// when the process ends and at each process_output / process_list call; these also check it as soon
// as something changes where what runs later lives (inotify: the root's git folder, the root itself,
// and the folders of what the root's git config names, its hooks folder and includes: review g7's
// loop re-made an include outside `.git` and the user's git ran it four times in the timer's 2 s),
// and every few seconds besides for the rest of the tree. Checks take at most a 20th of the time
// (a check is a cached walk, one lstat a folder).
import { lstatSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { runsLaterByConfig } from "../fs/git-config.js";
import { osPath } from "../fs/names.js";
import { beyondTheWalk } from "./gitlinks.js";

/** How often the whole tree is checked while the process runs (a cached walk: one lstat per folder). */
const GUARD_EVERY_MS = 2_000;
/** Events come in bursts (a `git` command touches many entries): one check after the burst settles. */
const SETTLE_MS = 15;

/** At most this many folders watched for one process (inotify watches are a per-user limit). */
const MAX_WATCHED = 32;
/** Past that many, how often the quick check runs on its own. */
const POLL_MS = 250;

/**
 * The folders whose entries run later at the user's next git command or shell: watched. With the git
 * folders of the repositories the root's index gitlinks (review g11: a loop re-arming `sub/.git/config`
 * of a repository it had gitlinked made no event where the watch looked).
 */
function watchedFolders(root: string): string[] {
  // In this order: past the cap, the last are the ones left to the quick check's own timer.
  const out = new Set([path.join(root, ".git"), root]);
  try {
    for (const p of runsLaterByConfig(root)) {
      if (lstatSync(osPath(p), { throwIfNoEntry: false })?.isDirectory()) out.add(p); // a hooks folder
      out.add(path.dirname(p)); // where an include (or the hooks folder itself) is made
    }
    for (const g of beyondTheWalk(root, [], [], false).dirs) out.add(g);
  } catch {
    // A config or index this look cannot read (EIO): what was found is watched, the rest on the timer.
  }
  return [...out];
}

/**
 * `fn`, in a timer's callback, where a throw would end the process (`latch mcp` and every box with
 * it: review g13). The watch only looks sooner than the checks at process_output, process_list and
 * the process's end, which stay; what one look here met is met again by those.
 */
function unthrown(fn: () => void): void {
  try {
    fn();
  } catch {
    // see above: the next look, here or there, runs all the same
  }
}

/**
 * Whether a watched folder is still there to watch. Never throws: a process can make the name a file
 * (ENOTDIR) or shut a folder on the way (EACCES), and a throw here ended the watch and the server
 * (review g13); such a folder is dropped and watched again when it is one.
 */
function stillThere(folder: string): boolean {
  try {
    return lstatSync(osPath(folder), { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/**
 * Run `check` while a background process runs; the returned function stops it. A watch event runs the
 * quick check (`check(true)`: what the root holds, no walk) after the burst settles; the timer the full
 * one, at most a 20th of the time (review g10: a full check on each event, kept to that budget, was
 * made to wait seconds by a folder of 300,000 files).
 */
export function watchGuard(root: string, check: (quick: boolean) => void, everyMs = GUARD_EVERY_MS): () => void {
  let stopped = false;
  // Each full check's time, kept to a 20th: a walk of 50,000 folders beside a dev server running for
  // hours would otherwise spend a core on checks.
  let readyAt = 0;
  const full = () => {
    const t0 = performance.now();
    check(false);
    readyAt = performance.now() + (performance.now() - t0) * 20;
  };
  let soon: NodeJS.Timeout | undefined;
  const checkSoon = () => {
    if (stopped) return;
    soon ??= setTimeout(() => {
      soon = undefined;
      if (stopped) return;
      unthrown(() => {
        check(true);
        watchMore();
      });
    }, SETTLE_MS);
  };
  const watchers = new Map<string, FSWatcher>();
  // Each check may find a folder to watch that was not there (a repository gitlinked since): added then.
  // Past the cap (a process can gitlink decoy repositories to fill it: review g12), the quick check
  // runs on a short timer instead, for what is not watched.
  let polling: NodeJS.Timeout | undefined;
  const watchMore = () => {
    if (stopped) return;
    const wanted = watchedFolders(root);
    for (const [folder, w] of watchers)
      if (!stillThere(folder)) {
        w.close(); // gone: one made again is a new folder, watched anew
        watchers.delete(folder);
      }
    let capped = false;
    for (const folder of wanted) {
      if (watchers.has(folder)) continue;
      if (watchers.size >= MAX_WATCHED) {
        capped = true;
        continue;
      }
      try {
        const w = watch(osPath(folder), { persistent: false }, checkSoon);
        w.on("error", () => w.close()); // the folder went: the timer still checks
        watchers.set(folder, w);
      } catch (err) {
        // Not there (or no inotify watch left: the timer still checks).
        if (!["ENOENT", "ENOTDIR", "ENOSPC", "EMFILE", "EACCES", "EPERM"].includes(errnoCode(err) ?? "")) throw err;
      }
    }
    if (capped && polling === undefined) {
      polling = setInterval(checkSoon, POLL_MS);
      polling.unref();
    } else if (!capped && polling !== undefined) {
      clearInterval(polling);
      polling = undefined;
    }
  };
  watchMore();
  let every: NodeJS.Timeout | undefined;
  const tick = () => {
    unthrown(() => {
      full();
      watchMore();
    });
    if (!stopped) schedule(Math.max(everyMs, readyAt - performance.now()));
  };
  const schedule = (ms: number) => {
    every = setTimeout(tick, ms);
    every.unref();
  };
  schedule(everyMs);
  return () => {
    stopped = true;
    for (const w of watchers.values()) w.close();
    if (polling) clearInterval(polling);
    clearTimeout(every);
    if (soon) clearTimeout(soon);
  };
}
