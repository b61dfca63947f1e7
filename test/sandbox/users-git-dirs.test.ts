// A box takes a folder for a git folder by what it holds (`HEAD` beside `objects/` and `refs/`), and
// keeps its config and hooks read-only. Review g28: a call renamed a submodule's (or a bare
// repository's) `HEAD` and `objects` away, a box started later took the folder for a plain one, its
// config or hooks got the model's program, and `HEAD` went back: the user's `git status` or `git push`
// ran it. And a git folder kept inside the root's `.git` (`git init --separate-git-dir`) was listed by
// nothing. Now a box keeps read-only every git folder a guard's baseline saw as the user's while it is
// the same folder (guard-shared.ts `usersGitDirs`), and a `.git` file's target inside the root's
// `.git` is listed (gitlinks.ts). Tried for real: the disk, the user's own git, the process table.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { waitFor } from "../helpers/wait.js";
import { initRepo, makeSandboxFixture, processesWith, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

type Out = { status: string; result?: Record<string, any> };

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

const shell = (host: Host, script: string, extra: Record<string, unknown> = {}) =>
  host.call("local_shell", { command: "sh", args: ["-c", script], ...extra }) as Promise<Out>;

/** The user's real git: what it ran is what matters, not its exit code. */
function userGit(fx: SandboxFixture, cwd: string, ...args: string[]): void {
  spawnSync("git", args, { cwd, env: { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1" } });
}

const arm = (marker: string) => `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n'`;

/** A workspace repository with the user's submodule `sub` (its git folder `.git/modules/sub`). */
function withSubmodule(prefix: string): SandboxFixture {
  const fx = makeSandboxFixture(prefix);
  fixtures.push(fx);
  initRepo(fx);
  const up = path.join(fx.outside, "upstream");
  const user = ["-c", "user.email=u@x", "-c", "user.name=u"];
  execFileSync("git", ["init", "-q", up]);
  writeFileSync(path.join(up, "s.txt"), "s\n");
  execFileSync("git", ["-C", up, "add", "s.txt"]);
  execFileSync("git", ["-C", up, ...user, "commit", "-q", "-m", "s"]);
  fx.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub");
  fx.git("commit", "-q", "-m", "sub");
  return fx;
}

test("attack: a submodule's HEAD and objects renamed by a background process, its config armed by a call, put back", async () => {
  await requireSandbox();
  const fx = withSubmodule("latch-sbx-spoiled-module-");
  const config = path.join(fx.root, ".git/modules/sub/config");
  const before = readFileSync(config, "utf8");
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  const tag = "spoiled-module-bg-sleeping";
  const bg = await shell(host, `cd .git/modules/sub && mv HEAD H.x && mv objects o.x && exec -a ${tag} sleep 30`, {
    background: true,
  });
  assert.equal(bg.status, "ok", JSON.stringify(bg));
  assert.ok(await waitFor(() => existsSync(path.join(fx.root, ".git/modules/sub/H.x"))), "the background process ran");
  const fg = await shell(
    host,
    `cd .git/modules/sub; ${arm(marker)} >> config 2>&1 || echo REFUSED; mv H.x HEAD && mv o.x objects; true`,
  );
  assert.equal(fg.status, "ok", JSON.stringify(fg));
  assert.match(String(fg.result!.stdout), /REFUSED/, JSON.stringify(fg.result));
  assert.match(String(fg.result!.stderr), /Read-only file system/);
  assert.equal(((await host.call("process_kill", { id: String(bg.result!.id) })) as Out).status, "ok");
  assert.ok(await waitFor(() => processesWith(tag).length === 0), "the background process is gone");
  host.close();
  assert.equal(readFileSync(config, "utf8"), before, "the submodule's config as the user had it");
  userGit(fx, fx.root, "status", "--short");
  userGit(fx, path.join(fx.root, "sub"), "status", "--short");
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
});

test("attack: the user's bare repository's HEAD renamed by one call, a pre-receive hook written by the next", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-spoiled-bare-");
  fixtures.push(fx);
  initRepo(fx);
  fx.git("init", "-q", "--bare", "remote.git");
  fx.git("push", "-q", "remote.git", "HEAD:refs/heads/main");
  const head = readFileSync(path.join(fx.root, "remote.git/HEAD"), "utf8");
  const marker = path.join(fx.outside, "hook-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  const one = await shell(host, "cd remote.git && mv HEAD H.x && mv objects o.x");
  assert.equal(one.status, "ok", JSON.stringify(one));
  assert.equal(one.result!.exit_code, 0, JSON.stringify(one.result));
  const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n'`;
  const two = await shell(
    host,
    `cd remote.git; (${hook} > hooks/pre-receive && chmod +x hooks/pre-receive) 2>&1 || echo REFUSED; ` +
      `${arm(marker)} >> config 2>&1 || echo REFUSED; mv H.x HEAD; mv o.x objects; true`,
  );
  assert.equal(two.status, "ok", JSON.stringify(two));
  assert.equal(String(two.result!.stdout).match(/REFUSED/g)?.length, 2, JSON.stringify(two.result));
  host.close();
  assert.equal(existsSync(path.join(fx.root, "remote.git/hooks/pre-receive")), false);
  assert.doesNotMatch(readFileSync(path.join(fx.root, "remote.git/config"), "utf8"), /fsmonitor/);
  fx.write("b.txt", "b\n");
  fx.git("add", "b.txt");
  fx.git("commit", "-q", "-m", "b");
  userGit(fx, fx.root, "push", "-q", "remote.git", "HEAD:refs/heads/main");
  assert.equal(existsSync(marker), false, "the model's hook ran at the user's git push");
  // The user's HEAD, put back by the call, is theirs still (not taken for one the call made), and
  // the push went through.
  assert.equal(readFileSync(path.join(fx.root, "remote.git/HEAD"), "utf8"), head);
  assert.equal(
    execFileSync("git", ["--git-dir", path.join(fx.root, "remote.git"), "log", "-1", "--format=%s", "main"], {
      encoding: "utf8",
    }),
    "b\n",
  );
});

test("attack: a nested repository whose git folder is kept inside the root's .git has its config armed", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-separate-gitdir-");
  fixtures.push(fx);
  initRepo(fx);
  mkdirSync(path.join(fx.root, "sub"));
  mkdirSync(path.join(fx.root, ".git/repos"));
  execFileSync("git", ["init", "-q", "--separate-git-dir", path.join(fx.root, ".git/repos/sub")], {
    cwd: path.join(fx.root, "sub"),
  });
  const config = path.join(fx.root, ".git/repos/sub/config");
  const before = readFileSync(config, "utf8");
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  const out = await shell(host, `${arm(marker)} >> .git/repos/sub/config 2>&1 || echo REFUSED`);
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.match(String(out.result!.stdout), /REFUSED/, JSON.stringify(out.result));
  host.close();
  assert.equal(readFileSync(config, "utf8"), before);
  userGit(fx, path.join(fx.root, "sub"), "status", "--short");
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
});

// Review g29: a `.git` file made during a call names a folder that was there, which then was listed as
// a new repository and neutralized: its `config/` and `hooks/` (the user's source code, or the user's
// submodules' git folders under `.git/modules`) were set aside. Now the new `.git` file is set aside;
// a folder of the walk's that was there is not neutralized, and elsewhere neutralizing leaves a folder
// named `config` and a file in `hooks/` git would not run (no execute bit).
test("attack: a .git file made to name the user's src/ sets aside none of src's files", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-gitfile-src-");
  fixtures.push(fx);
  initRepo(fx);
  fx.write("src/hooks/useAuth.ts", "export const useAuth = 1;\n");
  fx.write("src/config/app.json", "{}\n");
  fx.git("add", "src");
  fx.git("commit", "-q", "-m", "src");
  const host = await fx.host({ envelope: "auto_edit" });
  const out = await shell(host, "mkdir x && printf 'gitdir: ../src\\n' > x/.git");
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.deepEqual(
    (out.result!.undone as { path: string }[]).map((u) => u.path),
    ["x/.git"],
  );
  host.close();
  assert.equal(readFileSync(path.join(fx.root, "src/hooks/useAuth.ts"), "utf8"), "export const useAuth = 1;\n");
  assert.equal(readFileSync(path.join(fx.root, "src/config/app.json"), "utf8"), "{}\n");
  assert.equal(fx.git("status", "--short", "src"), "");
});

test("attack: .git/modules made a git directory and named by a .git file keeps the user's submodules", async () => {
  await requireSandbox();
  const fx = withSubmodule("latch-sbx-gitfile-modules-");
  const up = path.join(fx.outside, "upstream");
  for (const name of ["config", "hooks"])
    fx.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up, name);
  fx.git("commit", "-q", "-m", "subs");
  const host = await fx.host({ envelope: "auto_edit" });
  const out = await shell(
    host,
    "cd .git/modules && echo 'ref: refs/heads/main' > HEAD && mkdir objects refs && cd ../.. && " +
      "mkdir y && printf 'gitdir: ../.git/modules\\n' > y/.git",
  );
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.deepEqual(
    (out.result!.undone as { path: string }[]).map((u) => u.path).sort(),
    ["y/.git"],
    JSON.stringify(out.result!.undone),
  );
  host.close();
  for (const name of ["config", "hooks", "sub"]) {
    assert.ok(existsSync(path.join(fx.root, ".git/modules", name, "HEAD")), `${name}'s git folder is whole`);
    const r = spawnSync("git", ["log", "--oneline", "-1"], { cwd: path.join(fx.root, name), encoding: "utf8" });
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
  }
});

// Review g30, tried on the fixes above: a hook kept for its mode, made executable later through a hard
// link's other name; and a folder the walk saw, renamed to `x/.git` and made a repository (its inode
// was a folder that was there, so it went unjudged; a freed inode number did the same).
test("attack: a hook hard-linked to a file of the workspace, made executable in a later call, runs nothing", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-hook-hardlink-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "hook-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  const one = await shell(
    host,
    `git init -q sub && printf '#!/bin/sh\\ntouch ${marker}\\n' > notes.txt && ln notes.txt sub/.git/hooks/pre-commit`,
  );
  assert.equal(one.status, "ok", JSON.stringify(one));
  assert.ok(
    (one.result!.undone as { path: string }[]).some((u) => u.path === "sub/.git/hooks/pre-commit"),
    JSON.stringify(one.result!.undone),
  );
  const two = await shell(host, "chmod 755 notes.txt; ln -f notes.txt sub/.git/hooks/pre-commit 2>&1; true");
  assert.equal(two.status, "ok", JSON.stringify(two));
  host.close();
  fx.write("sub/f.txt", "f\n");
  const env = { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1" };
  const user = ["-c", "user.email=u@x", "-c", "user.name=u"];
  spawnSync("git", ["add", "f.txt"], { cwd: path.join(fx.root, "sub"), env });
  spawnSync("git", [...user, "commit", "-q", "-m", "f"], { cwd: path.join(fx.root, "sub"), env });
  assert.equal(existsSync(marker), false, "the model's hook ran at the user's git commit");
});

test("attack: a folder the walk saw, renamed to x/.git and made a repository, is neutralized", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-folder-to-dotgit-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  assert.equal((await shell(host, "mkdir notes && echo n > notes/n.txt")).status, "ok");
  const two = await shell(
    host,
    `mkdir x && mv notes x/.git && git init -q x && git -C x config core.fsmonitor 'touch ${marker}; false' && ` +
      `git -C x -c user.email=m@x -c user.name=m commit -q --allow-empty -m m && git add x`,
  );
  assert.equal(two.status, "ok", JSON.stringify(two));
  assert.equal(two.result!.exit_code, 0, JSON.stringify(two.result));
  assert.ok(
    (two.result!.undone as { path: string }[]).some((u) => u.path === "x/.git/config"),
    JSON.stringify(two.result!.undone),
  );
  host.close();
  assert.doesNotMatch(readFileSync(path.join(fx.root, "x/.git/config"), "utf8"), /fsmonitor/);
  userGit(fx, fx.root, "status", "--short");
  userGit(fx, path.join(fx.root, "x"), "status", "--short");
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
});

test("attack: a folder the walk saw, moved into a new repository's .git/modules and armed, is neutralized", async () => {
  // Review g31: it kept its inode, so it was taken for a folder that was there, and not judged.
  await requireSandbox();
  const fx = makeSandboxFixture("latch-sbx-folder-to-modules-");
  fixtures.push(fx);
  initRepo(fx);
  const marker = path.join(fx.outside, "ran");
  const host = await fx.host({ envelope: "auto_edit" });
  assert.equal((await shell(host, "mkdir notes && echo hi > notes/todo.md")).status, "ok");
  const G = ".git/modules/foo";
  const two = await shell(
    host,
    `git init -q y && mkdir -p y/.git/modules && mv notes y/${G} && git init -q --bare y/${G} && cd y && ` +
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${G}/hooks/post-checkout && chmod 755 ${G}/hooks/post-checkout && ` +
      `git --git-dir=${G} config core.bare false && git --git-dir=${G} config core.fsmonitor 'touch ${marker}; false' && ` +
      `T=$(git --git-dir=${G} mktree </dev/null) && ` +
      `C=$(git --git-dir=${G} -c user.name=m -c user.email=m@e commit-tree -m x $T) && ` +
      `git --git-dir=${G} update-ref refs/heads/main $C && ` +
      `B=$(printf '[submodule "foo"]\\n\\tpath = foo\\n\\turl = ./foo-remote\\n' | git hash-object -w --stdin) && ` +
      `git update-index --add --cacheinfo 100644,$B,.gitmodules && git update-index --add --cacheinfo 160000,$C,foo`,
  );
  assert.equal(two.status, "ok", JSON.stringify(two));
  assert.equal(two.result!.exit_code, 0, JSON.stringify(two.result));
  const undone = (two.result!.undone as { path: string }[]).map((u) => u.path);
  assert.ok(undone.includes(`y/${G}/hooks/post-checkout`), JSON.stringify(undone));
  assert.ok(undone.includes(`y/${G}/config`), JSON.stringify(undone));
  host.close();
  userGit(fx, path.join(fx.root, "y"), "status", "--short");
  userGit(fx, path.join(fx.root, "y"), "submodule", "update", "--init");
  assert.equal(existsSync(marker), false, "the model's hook or core.fsmonitor ran at the user's git");
});
