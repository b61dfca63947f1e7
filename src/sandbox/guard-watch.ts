// A background process runs on between the model's calls, and what it makes meanwhile (a new
// `.git/commondir` naming a config of its own, a hook where there were none) runs at the user's next
// git command, which an editor makes on its own every few seconds. Its guard (guard.ts) is checked
// when the process ends and at each process_output / process_list call; these also check it as soon
// as the root's git folder changes (inotify), and every few seconds besides for the rest of the tree
// (at most a 20th of the time: a check is a cached walk, one lstat a folder).
import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { osPath } from "../fs/names.js";

/** How often the whole tree is checked while the process runs (a cached walk: one lstat per folder). */
const GUARD_EVERY_MS = 2_000;
/** Events come in bursts (a `git` command touches many entries): one check after the burst settles. */
const SETTLE_MS = 15;

/** Run `check` while a background process runs; the returned function stops it. */
export function watchGuard(root: string, check: () => void, everyMs = GUARD_EVERY_MS): () => void {
  let soon: NodeJS.Timeout | undefined;
  const checkSoon = () => {
    soon ??= setTimeout(() => {
      soon = undefined;
      check();
    }, SETTLE_MS);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(osPath(path.join(root, ".git")), { persistent: false }, checkSoon);
    watcher.on("error", () => watcher?.close()); // the folder went: the timer still checks
  } catch (err) {
    // No git folder there (or no inotify watch left: the timer still checks).
    if (!["ENOENT", "ENOTDIR", "ENOSPC", "EMFILE", "EACCES", "EPERM"].includes(errnoCode(err) ?? "")) throw err;
  }
  // Every everyMs, or more seldom in a tree so big that a check takes more than a 20th of that: a
  // dev server running for hours beside a walk of 50,000 folders would spend a core's tenth on it.
  let every: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = () => {
    const t0 = performance.now();
    check();
    if (!stopped) schedule(Math.max(everyMs, (performance.now() - t0) * 20));
  };
  const schedule = (ms: number) => {
    every = setTimeout(tick, ms);
    every.unref();
  };
  schedule(everyMs);
  return () => {
    stopped = true;
    watcher?.close();
    clearTimeout(every);
    if (soon) clearTimeout(soon);
  };
}
