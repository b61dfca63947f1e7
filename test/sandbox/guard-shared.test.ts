// Two guards of one workspace live at once (two contained calls, or a call beside a background
// process): the second's baseline is taken while the first's process has made something. Review g16:
// the first's check removed `.git/commondir` (or commented out an exec line), the process made it
// again, and the second's check kept it as the user's; review g18: the same when the process removed
// its own entry first, or made a repository whose config the first's check rewrote. The user's plain
// `git status` ran its program. Here the guards run without a sandbox: what each check does to the
// disk is what is asserted.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { ControlGuard } from "../../src/sandbox/guard.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-guard-shared-"));
after(() => rmSync(base, { recursive: true, force: true }));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: base };
const git = (root: string, ...a: string[]) =>
  execFileSync("git", ["-C", root, "-c", "user.email=u@x", "-c", "user.name=u", ...a], { env, encoding: "utf8" });

function repo(name: string): string {
  const root = path.join(base, name);
  mkdirSync(root);
  git(root, "init", "-q");
  for (const f of ["a", "b"]) {
    writeFileSync(path.join(root, f), `${f}\n`);
    git(root, "add", f);
    git(root, "commit", "-q", "-m", f);
  }
  return root;
}

test("what one guard removed and the process made again is removed by a guard that began meanwhile", () => {
  const root = repo("commondir");
  const commondir = path.join(root, ".git/commondir");
  const first = ControlGuard.start(root);
  writeFileSync(commondir, "../evil\n"); // the first call's process
  const second = ControlGuard.start(root); // a call that begins while it is there
  assert.deepEqual(
    first.check().map((u) => u.path),
    [".git/commondir"],
  );
  writeFileSync(commondir, "../evil\n"); // made again, during the second call
  assert.deepEqual(
    second.check().map((u) => u.path),
    [".git/commondir"],
    "the second call's baseline took the first's entry for the user's",
  );
  assert.equal(existsSync(commondir), false);
  first.end();
  second.end();
  // With no guard live, a new one looks afresh: an entry there now (the user's, say) is kept.
  writeFileSync(commondir, "../users\n");
  const third = ControlGuard.start(root);
  assert.deepEqual(third.check(), []);
  assert.equal(readFileSync(commondir, "utf8"), "../users\n");
  third.end();
});

test("what the process took out itself and made again while another guard began is removed", () => {
  const root = repo("own-removal");
  const commondir = path.join(root, ".git/commondir");
  const first = ControlGuard.start(root);
  writeFileSync(commondir, "../evil\n");
  const second = ControlGuard.start(root);
  rmSync(commondir); // the first call's process, before its check: nothing for that check to undo
  assert.deepEqual(first.check(), []);
  first.end();
  writeFileSync(commondir, "../evil\n"); // made again during the second call
  assert.deepEqual(
    second.check().map((u) => u.path),
    [".git/commondir"],
  );
  second.end();
});

test("a repository one call made, whose config the other armed again, is made plain by the other", () => {
  const root = repo("new-repo");
  const first = ControlGuard.start(root);
  const sub = path.join(root, "sub2");
  execFileSync("git", ["init", "-q", sub], { env });
  const config = path.join(sub, ".git/config");
  writeFileSync(config, readFileSync(config, "utf8") + "[core]\n\tfsmonitor = touch PAYLOAD\n");
  const second = ControlGuard.start(root);
  assert.ok(first.check().some((u) => u.path === "sub2/.git/config"));
  assert.doesNotMatch(readFileSync(config, "utf8"), /fsmonitor/);
  first.end();
  writeFileSync(config, readFileSync(config, "utf8") + "[core]\n\tfsmonitor = touch PAYLOAD\n");
  assert.ok(
    second.check().some((u) => u.path === "sub2/.git/config"),
    "the second call's baseline took the first call's repository for the user's",
  );
  assert.doesNotMatch(readFileSync(config, "utf8"), /fsmonitor/);
  second.end();
});

test("an exec line one guard commented out and the process put back is commented out by the other", () => {
  const root = repo("exec");
  execFileSync("git", ["-C", root, "rebase", "-q", "-i", "HEAD~1"], {
    env: { ...env, GIT_SEQUENCE_EDITOR: "sed -i 1ibreak" },
  });
  const todo = path.join(root, ".git/rebase-merge/git-rebase-todo");
  const line = "exec touch PAYLOAD";
  const first = ControlGuard.start(root);
  writeFileSync(todo, readFileSync(todo, "utf8") + `${line}\n`);
  const second = ControlGuard.start(root);
  assert.match(JSON.stringify(first.check()), /1 exec line/);
  writeFileSync(todo, readFileSync(todo, "utf8") + `${line}\n`); // put back, plain
  assert.match(JSON.stringify(second.check()), /1 exec line/, "the second guard kept the line as the user's");
  assert.doesNotMatch(readFileSync(todo, "utf8"), /^exec /m);
  first.end();
  second.end();
});
