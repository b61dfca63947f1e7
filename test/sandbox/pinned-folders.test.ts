// A writable box keeps read-only what git, editors and shells run later (each git folder's config and
// hooks, `.git` files, `.envrc`, `.vscode`, what a config names), found by its own walk as it starts,
// and that walk does not enter `node_modules` or a folder named `.git`. Review g27: a background
// process moved the user's nested repository into `node_modules`, a foreground call's box started
// meanwhile kept nothing of it read-only and appended `core.fsmonitor` to its config, and moved back
// it was the user's own again to the guard: the user's next `git status` there ran the model's program.
// Now every folder above such an entry is a mount point in the box (bwrap.ts), so none can move. Tried
// for real here; each test checks the disk, the user's own git, the process table and the log.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { bwrapArgs, pickLauncher } from "../../src/sandbox/bwrap.js";
import { waitFor } from "../helpers/wait.js";
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  processesWith,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "./sandbox-fixture.js";

type Out = { status: string; result?: Record<string, any> };

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

/** The user's real git in `dir` of the workspace: what it ran is what matters, not its exit code. */
function userGit(fx: SandboxFixture, dir: string, ...args: string[]): string {
  const r = spawnSync("git", args, {
    cwd: path.join(fx.root, dir),
    env: { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
  });
  return `${r.stdout}${r.stderr}`;
}

const shell = (host: Host, script: string, extra: Record<string, unknown> = {}) =>
  host.call("local_shell", { command: "sh", args: ["-c", script], ...extra }) as Promise<Out>;

/** A fixture: the root repository, a nested one of the user's (`sub`) and the user's runs-later entries. */
function userTree(prefix: string): SandboxFixture {
  const fx = makeSandboxFixture(prefix);
  fixtures.push(fx);
  initRepo(fx);
  fx.write("sub/s.txt", "s\n");
  fx.git("init", "-q", "sub");
  fx.git("-C", "sub", "add", "s.txt");
  fx.git("-C", "sub", "-c", "user.email=u@x", "-c", "user.name=u", "commit", "-q", "-m", "s");
  fx.write("proj/.vscode/settings.json", '{ "users": "own" }\n');
  fx.write("env/.envrc", "export USERS_OWN=1\n");
  fx.write("tools/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755);
  fx.git("config", "core.hooksPath", "tools/hooks");
  return fx;
}

/** What the user had, byte for byte, after the attack. */
function assertUsersTreeKept(fx: SandboxFixture, subConfig: string): void {
  const at = (rel: string) => path.join(fx.root, rel);
  assert.equal(readFileSync(at("sub/.git/config"), "utf8"), subConfig, "sub's config as the user left it");
  assert.equal(readFileSync(at("sub/s.txt"), "utf8"), "s\n");
  assert.equal(readFileSync(at("proj/.vscode/settings.json"), "utf8"), '{ "users": "own" }\n');
  assert.equal(readFileSync(at("env/.envrc"), "utf8"), "export USERS_OWN=1\n");
  assert.equal(readFileSync(at("tools/hooks/pre-commit"), "utf8"), "#!/bin/sh\nexit 0\n");
  for (const gone of ["node_modules/sub", "x/.git/sub", "node_modules/proj", "node_modules/env", "node_modules/tools"])
    assert.equal(existsSync(at(gone)), false, `${gone}: nothing was moved there`);
}

test("attack: a contained process moves the user's entries where the next box's walk does not look: each stays", async () => {
  await requireSandbox();
  const fx = userTree("latch-sbx-pinned-");
  const subConfig = readFileSync(path.join(fx.root, "sub/.git/config"), "utf8");
  const host = await fx.host({ envelope: "auto_edit" });
  // Each move on its own: one that went through would hide the entry from the next box's walk.
  const moves = [
    ["sub", "node_modules/sub"],
    ["sub", "x/.git/sub"],
    ["sub/.git", "node_modules/subgit"],
    ["proj", "node_modules/proj"],
    ["env", "node_modules/env"],
    ["tools", "node_modules/tools"],
  ];
  const script =
    "mkdir -p node_modules x/.git; " +
    moves.map(([from, to]) => `mv ${from} ${to} 2>&1 && echo "MOVED ${from}" || echo "KEPT ${from}"`).join("; ") +
    "; false"; // a failed run's result says why a rename meets EBUSY (sandbox_note)
  const out = await shell(host, script);
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  const said = String(out.result!.stdout);
  assert.doesNotMatch(said, /MOVED/, said);
  assert.equal(said.match(/KEPT/g)?.length, moves.length, said);
  assert.equal(said.match(/Device or resource busy/g)?.length, moves.length, said);
  assert.match(String(out.result!.sandbox_note), /every folder above a secret, a denied path, a git folder/);
  assertUsersTreeKept(fx, subConfig);
  const log = decisions(host).at(-1)!;
  assert.equal(log.final, "allow");
  assert.deepEqual(log.sandbox, { contained: true, mode: "workspace-write", network: false });
  host.close();
});

test("attack: a background process moves the user's nested repository away, and a call meanwhile arms its config", async () => {
  // Review g27, as it was tried: into node_modules, and into a new folder named `.git`.
  await requireSandbox();
  const fx = userTree("latch-sbx-pinned-bg-");
  const subConfig = readFileSync(path.join(fx.root, "sub/.git/config"), "utf8");
  const marker = path.join(fx.outside, "fsmonitor-ran");
  const host = await fx.host({ envelope: "auto_edit" });
  for (const [i, hideout] of ["node_modules/sub", "x/.git/sub"].entries()) {
    const tag = `pinned-bg-${i}-sleeping`;
    const bg = await shell(
      host,
      `mkdir -p ${path.dirname(hideout)}; mv sub ${hideout} 2>&1; touch ready; exec -a ${tag} sleep 30`,
      { background: true },
    );
    assert.equal(bg.status, "ok", JSON.stringify(bg));
    const id = String(bg.result!.id);
    assert.ok(await waitFor(() => existsSync(path.join(fx.root, "ready"))), "the background process ran its move");
    const arm = `printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n'`;
    const fg = await shell(
      host,
      `for c in ${hideout}/.git/config sub/.git/config; do ${arm} >> $c 2>&1 || echo "REFUSED $c"; done; ` +
        `test -d ${hideout} && mv ${hideout} sub; true`,
    );
    assert.equal(fg.status, "ok", JSON.stringify(fg));
    assert.equal(String(fg.result!.stdout).match(/REFUSED/g)?.length, 2, JSON.stringify(fg.result));
    const killed = await host.call("process_kill", { id });
    assert.equal((killed as Out).status, "ok", JSON.stringify(killed));
    assert.ok(await waitFor(() => processesWith(tag).length === 0), "the background process is gone");
    const bgOut = (await host.call("process_output", { id })) as Out;
    assert.match(JSON.stringify(bgOut.result), /Device or resource busy/, "its move failed");
    assertUsersTreeKept(fx, subConfig);
    userGit(fx, "sub", "status", "--short");
    userGit(fx, ".", "status", "--short");
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
    spawnSync("rm", ["-rf", "ready", "node_modules", "x"], { cwd: fx.root });
  }
  const log = decisions(host);
  assert.ok(log.length >= 4, JSON.stringify(log));
  for (const d of log.filter((r) => r.tool === "local_shell")) assert.equal(d.final, "allow");
  host.close();
});

test("a workspace whose git folders take more than bwrap's arguments says so, and what to remove", () => {
  // Review g28: 1,600 empty `.git` folders a command made (each bound, and the folder above it) stopped
  // every later start, and the message counted only secrets, denied paths and unreadable folders.
  const fx = makeSandboxFixture("latch-sbx-pinned-many-");
  fixtures.push(fx);
  for (let i = 0; i < 1600; i++) mkdirSync(path.join(fx.root, `d${i}/.git`), { recursive: true });
  assert.throws(
    () =>
      bwrapArgs(
        { file: "/bin/true", args: [], cwd: fx.root, env: { PATH: SYSTEM_PATH.join(":") } },
        { root: fx.root, mode: "workspace-write", network: false, hidden: [fx.state], home: fx.home, denied: [] },
        pickLauncher(),
      ),
    (err: Error) =>
      /1600 git folders and 0 entries/.test(err.message) &&
      /of bwrap's 9000 arguments/.test(err.message) &&
      /find \. -name \.git -type d -empty/.test(err.message),
  );
});
