// The user who discards a call's changes (`git checkout .`, `git reset --hard`) writes what git holds
// of each tracked file: the index's or HEAD's version. A contained process cannot write the worktree's
// hooks folder (`core.hooksPath = .githooks`, kept read-only in the box), but it can stage or commit its
// own version of a hook through git's plumbing. Each attack is shown to work without latch first; then,
// contained, the user's real git discards the changes and commits, and the model's hook must not run.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { repoFixtures, requireSandbox, undoneAfterNode, type SandboxFixture } from "./sandbox-fixture.js";

const fixture = repoFixtures();

/** A repository whose hooks are tracked in `.githooks`, the user's own pre-commit there. */
function hooksRepo(): SandboxFixture {
  const fx = fixture("latch-tree-guard-");
  fx.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755);
  fx.git("add", ".githooks");
  fx.git("commit", "-q", "-m", "hooks");
  fx.git("config", "core.hooksPath", ".githooks");
  return fx;
}

/** The user's own git, outside any box; a git that fails still ran what it ran. */
function userGit(fx: SandboxFixture, ...args: string[]): string {
  try {
    return execFileSync("git", args, {
      cwd: fx.root,
      env: { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return "";
  }
}

/** A shell line through `node -e` (auto_edit runs node contained, workspace-write, asking no one). */
const shell = (sh: string) =>
  `require("child_process").execSync(${JSON.stringify(sh)}, { stdio: "inherit", shell: "/bin/sh" });`;

/** Lines that store a pre-commit touching `marker` and stage it at `rel`, through git's plumbing. */
const staged = (marker: string, rel = ".githooks/pre-commit") =>
  `sha=$(printf '#!/bin/sh\\ntouch ${marker}\\n' | git hash-object -w --stdin) && git update-index --add --cacheinfo 100755,$sha,${rel}`;
/** …and committed, with a file of the call's own beside it (`git commit` runs no hook: the box's are the user's). */
const committed = (marker: string, rel?: string) =>
  `${staged(marker, rel)} && echo work > b.txt && git add b.txt && git -c core.hooksPath=/dev/null commit -q -m model`;

/** The user discards the call's changes, then commits: does the model's hook run? */
function userDiscardsAndCommits(fx: SandboxFixture, how: "checkout" | "reset"): void {
  if (how === "checkout") userGit(fx, "checkout", "--", ".");
  else userGit(fx, "reset", "--hard", "-q");
  userGit(fx, "-c", "user.email=u@example.com", "-c", "user.name=u", "commit", "-q", "--allow-empty", "-m", "user");
}

async function contained(fx: SandboxFixture, sh: string) {
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  return undoneAfterNode(host, shell(sh));
}

test("a hook the call staged in git's index is put back: the user's git checkout . writes the user's", async () => {
  await requireSandbox();
  const plain = hooksRepo();
  const plainMarker = path.join(plain.outside, "MARKER");
  execFileSync("sh", ["-c", staged(plainMarker)], { cwd: plain.root, env: { ...process.env, HOME: plain.home } });
  userDiscardsAndCommits(plain, "checkout");
  assert.ok(existsSync(plainMarker), "without latch the staged hook must run, or this test proves nothing");

  const fx = hooksRepo();
  const marker = path.join(fx.outside, "MARKER");
  const index = fx.git("ls-files", "-s");
  const undone = await contained(fx, staged(marker));
  assert.deepEqual(
    undone.map((u) => u.path),
    [".githooks/pre-commit"],
    JSON.stringify(undone),
  );
  assert.match(undone[0].what, /^put back in git's index: /);
  assert.equal(fx.git("ls-files", "-s"), index, "the index is as it was");
  userDiscardsAndCommits(fx, "checkout");
  assert.equal(existsSync(marker), false, "the user's git checkout . wrote the model's hook, and their commit ran it");
});

test("a commit of the call's that changes a hook is moved off HEAD, kept on a branch, its other changes staged", async () => {
  await requireSandbox();
  const plain = hooksRepo();
  const plainMarker = path.join(plain.outside, "MARKER");
  execFileSync("sh", ["-c", committed(plainMarker)], { cwd: plain.root, env: { ...process.env, HOME: plain.home } });
  userDiscardsAndCommits(plain, "reset");
  assert.ok(existsSync(plainMarker), "without latch the committed hook must run, or this test proves nothing");

  const fx = hooksRepo();
  const marker = path.join(fx.outside, "MARKER");
  const head = fx.git("rev-parse", "HEAD").trim();
  const undone = await contained(fx, committed(marker));
  const moved = undone.find((u) => u.path === ".git/HEAD");
  assert.ok(moved, JSON.stringify(undone));
  assert.match(moved.what, /^moved back to [0-9a-f]{12} on master: .*`\.githooks\/pre-commit`/);
  assert.equal(fx.git("rev-parse", "HEAD").trim(), head, "HEAD is where it was");
  assert.equal(fx.git("symbolic-ref", "HEAD").trim(), "refs/heads/master");
  const held = fx.git("for-each-ref", "--format=%(refname:short)", "refs/heads/latch/").trim();
  assert.match(held, /^latch\/held-[0-9a-f]{12}$/, "the model's commit is kept");
  assert.equal(fx.git("log", "-1", "--format=%s", held).trim(), "model");
  assert.equal(fx.git("diff", "--cached", "--name-only").trim(), "b.txt", "the commit's other change is staged");
  userDiscardsAndCommits(fx, "reset");
  assert.equal(
    existsSync(marker),
    false,
    "the user's git reset --hard wrote the model's hook, and their commit ran it",
  );
});

test("a hook under a runs-later name made new in the index (.husky) is taken out of it", async () => {
  await requireSandbox();
  const fx = fixture("latch-tree-guard-");
  fx.git("config", "core.hooksPath", ".husky");
  const marker = path.join(fx.outside, "MARKER");
  const undone = await contained(fx, staged(marker, ".husky/pre-commit"));
  assert.deepEqual(
    undone.map((u) => u.path),
    [".husky/pre-commit"],
    JSON.stringify(undone),
  );
  assert.equal(fx.git("ls-files", "--", ".husky").trim(), "", "nothing of the model's is left in the index");
  userDiscardsAndCommits(fx, "checkout");
  assert.equal(existsSync(marker), false, "the user's git checkout . made the model's hook");
});

test("the call's own commits and staged files elsewhere are left alone", async () => {
  await requireSandbox();
  const fx = hooksRepo();
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const first = await undoneAfterNode(
    host,
    shell("echo x > b.txt && git add b.txt && git commit -q -m work && echo y > c.txt && git add c.txt"),
  );
  assert.deepEqual(first, []);
  assert.equal(fx.git("log", "-1", "--format=%s").trim(), "work");
  assert.equal(fx.git("diff", "--cached", "--name-only").trim(), "c.txt");
  // The hooks folder itself stays the user's in the worktree (read-only in the box), and so in git.
  mkdirSync(path.join(fx.root, "src"), { recursive: true });
  writeFileSync(path.join(fx.root, "src/app.ts"), "x\n");
  assert.deepEqual(await undoneAfterNode(host, shell("git status --short")), []);
});
