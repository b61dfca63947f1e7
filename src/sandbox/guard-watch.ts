// A background process runs on between the model's calls, and what it makes meanwhile (a new
// `.git/commondir` naming a config of its own, a hook where there were none) runs at the user's next
// git command, which an editor makes on its own every few seconds. Its guard (guard.ts) is checked
// when the process ends and at each process_output / process_list call; these also check it as soon
// as something changes where what runs later lives (inotify: the root's git folder, the root itself,
// and the folders of what the root's git config names, its hooks folder and includes: review g7's
// loop re-made an include outside `.git` and the user's git ran it four times in the timer's 2 s),
// and every few seconds besides for the rest of the tree. Checks take at most a 20th of the time
// (a check is a cached walk, one lstat a folder).
import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { runsLaterByConfig } from "../fs/git-config.js";
import { osPath } from "../fs/names.js";
import { beyondTheWalk } from "./gitlinks.js";
import { atMostEvery, identity, LOOK_EVERY_MS } from "./holds.js";

/** How often the whole tree is checked while the process runs (a cached walk: one lstat per folder). */
const GUARD_EVERY_MS = 2_000;
/** Events come in bursts (a `git` command touches many entries): one check after the burst settles. */
const SETTLE_MS = 15;

/** At most this many folders watched for one process (inotify watches are a per-user limit). */
const MAX_WATCHED = 32;
/** Folders that went and are looked for (the quick check polls while any is): at most this many. */
const MAX_LOST = 256;
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
  // Each part on its own: a config this look cannot read (EIO) must not hide the gitlinked ones.
  unthrown(() => {
    for (const p of runsLaterByConfig(root)) {
      if (folderId(p) !== undefined) out.add(p); // a hooks folder
      out.add(path.dirname(p)); // where an include (or the hooks folder itself) is made
    }
  });
  unthrown(() => {
    for (const g of beyondTheWalk(root, [], [], false).dirs) out.add(g);
  });
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
 * The folder at `p` by identity (`dev:ino` and its birth time: a folder removed and made again often
 * gets the same inode number back, review g15), or undefined when none is there. Never throws: a
 * process can make the name a file (ENOTDIR) or shut a folder on the way (EACCES), and a throw here
 * ended the watch and the server (review g13).
 */
function folderId(p: string): string | undefined {
  return identity(p, true) || undefined;
}

/**
 * Run `check` while a background process runs; the returned function stops it. A watch event runs the
 * quick check (`check(true)`: what the root holds, no walk) after the burst settles; the timer the full
 * one, at most a 20th of the time (review g10: a full check on each event, kept to that budget, was
 * made to wait seconds by a folder of 300,000 files).
 */
export function watchGuard(
  root: string,
  check: (quick: boolean) => void,
  everyMs = GUARD_EVERY_MS,
  /**
   * What the watch also serves (holds.ts): more folders to watch, after the root's own (where the boxes'
   * mount points are), and a look run at once on each event, before the settle (review g22: a loop
   * wrote 1,500 lines into a file whose mount was gone while the check waited 15 ms), at most one
   * each LOOK_EVERY_MS (a renaming loop's 10,000 events a second starved the server).
   */
  also: { folders: () => readonly string[]; now?: () => void } = { folders: () => [] },
): () => void {
  let stopped = false;
  const now = also.now && atMostEvery(LOOK_EVERY_MS, also.now);
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
  // Each watched folder with the identity it had when the watch began: a folder put in its place (the
  // same name, a new inode: review g14) is not the one watched, and is watched anew.
  const watchers = new Map<string, { w: FSWatcher; id: string }>();
  // Each check may find a folder to watch that was not there (a repository gitlinked since): added then.
  // Past the cap (a process can gitlink decoy repositories to fill it: review g12), or while a folder
  // that was watched is gone (review g14: swapped for another), the quick check runs on a short timer.
  let polling: NodeJS.Timeout | undefined;
  /** Folders that were watched and went: while one is not back and watched, the quick check polls. */
  const lost = new Set<string>();
  /** The watch on `folder` is no longer on the folder there: dropped, and the quick check polls until it is watched again. */
  const drop = (folder: string, w: FSWatcher) => {
    w.close();
    if (watchers.get(folder)?.w !== w) return;
    watchers.delete(folder);
    lost.add(folder);
    // Bounded (review g16: each gitlinked git folder watched and removed stays looked for): the oldest goes.
    if (lost.size > MAX_LOST) lost.delete(lost.values().next().value!);
  };
  const watchMore = () => {
    if (stopped) return;
    const wanted = [...new Set([...watchedFolders(root), ...also.folders()])];
    for (const [folder, { w, id }] of watchers) if (folderId(folder) !== id) drop(folder, w);
    // A lost folder stays lost while nothing is there: a gitlinked repository's git folder is named
    // only while it exists, and one put back later made no event (review g15: removed, back 150 ms later).
    for (const folder of lost) if (!wanted.includes(folder) && folderId(folder) !== undefined) lost.delete(folder);
    let capped = false;
    for (const folder of wanted) {
      if (watchers.has(folder)) continue;
      if (watchers.size >= MAX_WATCHED) {
        capped = true;
        continue;
      }
      const id = folderId(folder);
      if (id === undefined) continue;
      try {
        // An event on the folder itself (removed, moved, its mode changed: inotify names no entry, and
        // node gives the folder's own name) ends or may end the kernel's watch without an error
        // (review g15): dropped and watched again, as when the watch failed.
        const own = path.basename(folder);
        const w = watch(osPath(folder), { persistent: false }, (_event, name) => {
          if (name === own) drop(folder, w);
          if (now) unthrown(now);
          checkSoon();
        });
        w.on("error", () => {
          drop(folder, w);
          checkSoon();
        });
        // Made between the look and the watch: the identity is the watched folder's only when unchanged.
        if (folderId(folder) === id) {
          watchers.set(folder, { w, id });
          lost.delete(folder);
        } else w.close();
      } catch (err) {
        const code = errnoCode(err) ?? "";
        if (!["ENOENT", "ENOTDIR", "ENOSPC", "EMFILE", "EACCES", "EPERM"].includes(code)) throw err;
        // Not there; or no inotify watch left (a process can use them all up: review g22), and then
        // the quick check polls, as past the cap.
        if (code === "ENOSPC" || code === "EMFILE") capped = true;
      }
    }
    const blind = capped || lost.size > 0;
    if (blind && polling === undefined) {
      polling = setInterval(checkSoon, POLL_MS);
      polling.unref();
    } else if (!blind && polling !== undefined) {
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
    for (const { w } of watchers.values()) w.close();
    if (polling) clearInterval(polling);
    clearTimeout(every);
    if (soon) clearTimeout(soon);
  };
}
