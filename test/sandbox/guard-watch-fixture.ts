// What test/sandbox/guard-watch.test.ts and guard-watch-inode.test.ts share: repositories made as the
// user, gitlinked, and a watched `sub/.git` changed and then armed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { watchGuard } from "../../src/sandbox/guard-watch.js";
import { waitFor } from "../helpers/wait.js";

export function watchFixture(base: string) {
  /** git as the user, with no system config and a home of the test's. */
  const git = (...a: string[]) =>
    execFileSync("git", a, { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base }, encoding: "utf8" }).trim();

  /** A repository at `dir` with one empty commit (and `config` keys set first); its commit id. */
  function committed(dir: string, config: [string, string][] = []): string {
    git("init", "-q", dir);
    for (const [k, v] of config) git("-C", dir, "config", k, v);
    git("-C", dir, "-c", "user.email=u@x", "-c", "user.name=u", "commit", "-q", "--allow-empty", "-m", "s");
    return git("-C", dir, "rev-parse", "HEAD");
  }

  /** `name` gitlinked in the index of the repository `root` at `head`. */
  const gitlink = (root: string, name: string, head: string) =>
    git("-C", root, "update-index", "--add", "--cacheinfo", `160000,${head},${name}`);

  /**
   * A watched, gitlinked `sub/.git` changed by `change` (after the watch began); then its config armed:
   * the watch must see that write. Each test that uses it is a way `change` hid it (reviews g14, g15).
   */
  async function rearmedIsSeen(name: string, change: (root: string) => void | Promise<void>): Promise<void> {
    const root = path.join(base, name);
    git("init", "-q", root);
    gitlink(root, "sub", committed(path.join(root, "sub")));
    let checks = 0;
    const stop = watchGuard(root, () => checks++, 1e9);
    try {
      await new Promise((r) => setTimeout(r, 100));
      await change(root);
      await new Promise((r) => setTimeout(r, 600)); // the change's own events, and the checks after them
      checks = 0;
      writeFileSync(path.join(root, "sub/.git/config"), "[core]\n\tfsmonitor = x\n");
      assert.ok(await waitFor(() => checks > 0, 10_000), "no check after the new folder's config changed");
    } finally {
      stop();
    }
  }
  return { git, committed, gitlink, rearmedIsSeen };
}
