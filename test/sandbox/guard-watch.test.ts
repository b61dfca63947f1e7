// A background process's guard is checked as soon as something changes where what runs later lives,
// not only on its timer (review g7: a loop re-making an included config outside `.git` ran the user's
// git four times in the timer's 2 s). Here the timer never fires: every check seen is inotify's.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { ControlGuard } from "../../src/sandbox/guard.js";
import { watchGuard } from "../../src/sandbox/guard-watch.js";
import { waitFor } from "../helpers/wait.js";
import { watchFixture } from "./guard-watch-fixture.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-guard-watch-"));
after(() => rmSync(base, { recursive: true, force: true }));
const { git, committed, gitlink, rearmedIsSeen } = watchFixture(base);

test("the root, its git folder, and the folders its config names are watched; other folders are not", async () => {
  const root = path.join(base, "ws");
  mkdirSync(root);
  execFileSync("git", ["init", "-q", root], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base } });
  for (const d of ["tools", ".githooks", "src"]) mkdirSync(path.join(root, d));
  execFileSync("git", ["-C", root, "config", "include.path", "../tools/later.gitconfig"]); // named, not there
  execFileSync("git", ["-C", root, "config", "core.hooksPath", ".githooks"]);
  let checks = 0;
  const stop = watchGuard(
    root,
    (quick) => {
      assert.equal(quick, true, "a watch event runs the quick check");
      checks++;
    },
    1e9,
  );
  try {
    const made = async (rel: string) => {
      checks = 0;
      writeFileSync(path.join(root, rel), "x\n");
      assert.ok(await waitFor(() => checks > 0, 10_000), `${rel}: no check`);
    };
    await made(".envrc"); // the root: what runs later there (.envrc, .vscode, .gitconfig …)
    await made(".git/commondir"); // the git folder
    await made("tools/later.gitconfig"); // where an include the config names is made
    await made(".githooks/pre-commit"); // inside the hooks folder it names
    // A folder nothing runs from: no check (slowness only makes this pass, never fail).
    await new Promise((r) => setTimeout(r, 100));
    checks = 0;
    writeFileSync(path.join(root, "src/app.ts"), "x\n");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(checks, 0, "a write in src/ set off a check");
  } finally {
    stop();
  }
});

test("a full check made slow does not hold back the quick check a watch event runs", async () => {
  // Review g10: each event's check waited for the full check's budget (20× its time), and a folder of
  // 300,000 files made that seconds; the quick check looks at the root's own names, no walk.
  const root = path.join(base, "slow");
  mkdirSync(root);
  execFileSync("git", ["init", "-q", root], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base } });
  const calls: boolean[] = [];
  const stop = watchGuard(
    root,
    (quick) => {
      calls.push(quick);
      if (!quick) for (const t = performance.now(); performance.now() - t < 150;); // a slow walk: the next waits 3 s
    },
    20,
  );
  try {
    assert.ok(await waitFor(() => calls.includes(false), 10_000), "the timer's full check ran");
    const after = calls.length;
    writeFileSync(path.join(root, ".envrc"), "x\n");
    assert.ok(await waitFor(() => calls.length > after, 10_000), "no check after the event");
    assert.equal(calls[after], true, `the next check after the event: ${JSON.stringify(calls.slice(after))}`);
  } finally {
    stop();
  }
});

test("the quick check finds a new repository the root's index gitlinks, and neutralizes it", () => {
  // Review g11: the quick check looked at the root's own names only; a background process made `sub/`
  // a repository with core.fsmonitor and gitlinked it in the root's index, which the user's `git
  // status` at the root enters, while a folder of 200,000 files held the full check back.
  const root = path.join(base, "gitlinked");
  git("init", "-q", root);
  const guard = ControlGuard.start(root);
  gitlink(root, "sub", committed(path.join(root, "sub"), [["core.fsmonitor", "touch PAYLOAD"]]));
  const undone = guard.check(true);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["sub/.git/config"],
    JSON.stringify(undone),
  );
  assert.doesNotMatch(readFileSync(path.join(root, "sub/.git/config"), "utf8"), /fsmonitor/);
});

test("the git folders of the repositories the root's index gitlinks are watched, one gitlinked later too", async () => {
  // Review g11: a loop re-arming `sub/.git/config` of a repository it had gitlinked made no event where
  // the watch looked, and the full check was made slow: the payload ran 42 times in 34 `git status`.
  const root = path.join(base, "watch-gitlinked");
  git("init", "-q", root);
  gitlink(root, "sub", committed(path.join(root, "sub")));
  let checks = 0;
  const stop = watchGuard(root, () => checks++, 1e9);
  try {
    const touched = async (rel: string) => {
      await new Promise((r) => setTimeout(r, 100)); // the burst before settles
      checks = 0;
      writeFileSync(path.join(root, rel), "[core]\n\tfsmonitor = x\n");
      assert.ok(await waitFor(() => checks > 0, 10_000), `${rel}: no check`);
    };
    await touched("sub/.git/config");
    gitlink(root, "sub2", committed(path.join(root, "sub2"))); // the index changes: a check, which finds sub2
    assert.ok(await waitFor(() => checks > 0, 10_000), "no check after the index changed");
    await touched("sub2/.git/config");
  } finally {
    stop();
  }
});

test("past the folders it may watch, the quick check runs on a timer of its own", async () => {
  // Review g12: 31 decoy repositories gitlinked in the root's index filled the watch, and the one that
  // mattered, gitlinked after them, made no event: only the full check's slow timer saw it.
  const root = path.join(base, "watch-capped");
  git("init", "-q", root);
  const head = committed(path.join(root, "s"));
  // One repository copied under many names, each gitlinked: a `.git` folder git would enter.
  const gitlinks = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const name = `a${String(i).padStart(2, "0")}`;
      execFileSync("cp", ["-r", path.join(root, "s"), path.join(root, name)]);
      gitlink(root, name, head);
    }
  };
  const quiet = async () => {
    let checks = 0;
    const stop = watchGuard(root, () => checks++, 1e9);
    await new Promise((r) => setTimeout(r, 800));
    stop();
    return checks;
  };
  gitlinks(0, 10);
  assert.equal(await quiet(), 0, "under the cap, nothing changes, no check");
  gitlinks(10, 40);
  assert.ok((await quiet()) > 0, "past the cap, the quick check runs on its own");
});

test("a watched folder made a file, or shut, does not end the watch", async () => {
  // Review g13: `rm -rf sub; echo x > sub` made the watch's lstat of `sub/.git` throw ENOTDIR in a
  // timer's callback, which ended the process (`latch mcp`, and every box with it).
  const root = path.join(base, "watch-gone");
  git("init", "-q", root);
  gitlink(root, "sub", committed(path.join(root, "sub")));
  let checks = 0;
  const stop = watchGuard(root, () => checks++, 50);
  try {
    assert.ok(await waitFor(() => checks > 0, 10_000), "checks ran");
    rmSync(path.join(root, "sub"), { recursive: true });
    writeFileSync(path.join(root, "sub"), "x\n");
    const after = checks;
    assert.ok(await waitFor(() => checks > after + 3, 10_000), "the watch went on");
  } finally {
    stop();
  }
});

test("a watched folder swapped for another of the same name is watched anew", () =>
  // Review g14: `cp -a sub/.git sub/.g2 && rm -rf sub/.git && mv sub/.g2 sub/.git` left the watch on the
  // deleted folder, and re-arming the new one's config made no event for the rest of the process.
  rearmedIsSeen("watch-swapped", (root) => {
    execFileSync("sh", ["-c", "cp -a sub/.git sub/.g2 && rm -rf sub/.git && mv sub/.g2 sub/.git"], { cwd: root });
  }));

test("a watched folder removed, and put back a moment later, is looked at until it is watched again", () =>
  // Review g15: a gitlinked repository's git folder is named only while it is there; removed, it was no
  // longer wanted, the quick check stopped polling, and `mv` putting it back 150 ms later made no event.
  rearmedIsSeen("watch-back-later", async (root) => {
    execFileSync("cp", ["-a", path.join(root, "sub/.git"), path.join(root, "sub/.g2")]);
    rmSync(path.join(root, "sub/.git"), { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, 150));
    renameSync(path.join(root, "sub/.g2"), path.join(root, "sub/.git"));
  }));

test("a new repository's config holding a NUL is made git init's plain one", () => {
  // Review g14: `[remote "origin.uploadpack\0"] url = …` is remote.origin.uploadpack to git (it cuts a
  // key at a NUL), a kept remote url to the guard's reader; the user's `git fetch` ran it.
  const root = path.join(base, "nul-config");
  git("init", "-q", root);
  const guard = ControlGuard.start(root);
  const lib = path.join(root, "vendor/lib");
  git("init", "-q", lib);
  const cfg = path.join(lib, ".git/config");
  writeFileSync(cfg, readFileSync(cfg, "utf8") + '[remote "origin.uploadpack\0"]\n\turl = "touch PAYLOAD; false"\n');
  const undone = guard.check();
  assert.ok(
    undone.some((u) => u.path === "vendor/lib/.git/config"),
    JSON.stringify(undone),
  );
  assert.doesNotMatch(readFileSync(cfg, "utf8"), /uploadpack|PAYLOAD/);
});
