// What a repository's config names that runs later (a `core.hooksPath` folder, an included file),
// reached another way than latch looked (review g8, each tried for real): the workspace a linked
// worktree whose repository (and config) lies outside it; a link on the way, the user's own
// (`.githooks -> scripts/hooks`) or one the model made; a hooksPath set in the user's global config.
// The file tools must ask before writing there, the box keep it read-only, the guard undo what a call
// made there; each test ends with the user's real git.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { repoFixtures, requireSandbox, undoneAfterNode, type SandboxFixture } from "./sandbox-fixture.js";

const fixture = repoFixtures();

const marker = (fx: SandboxFixture) => path.join(fx.outside, "PAYLOAD-RAN");
const USERS_HOOK = "#!/bin/sh\necho users-own\n";
const evilHook = (fx: SandboxFixture) => `#!/bin/sh\ntouch ${marker(fx)}\n`;

/** The user's `git status` and a commit in `cwd`, outside latch, with `env` added. */
function userCommits(fx: SandboxFixture, cwd: string, env: Record<string, string> = {}): string {
  const e = { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1", GIT_CEILING_DIRECTORIES: fx.base, ...env };
  const user = ["-c", "user.email=u@x", "-c", "user.name=u"];
  const out = [
    spawnSync("git", ["status", "--short"], { cwd, env: e, encoding: "utf8" }),
    spawnSync("git", [...user, "commit", "-q", "--allow-empty", "-m", "user's"], { cwd, env: e, encoding: "utf8" }),
  ];
  return out.map((r) => `${r.stdout}${r.stderr}`).join("");
}

/** Under auto_edit (ordinary edits asked of no one), a write that runs later must ask: denied here. */
async function writeAsks(host: Host, rel: string, content: string): Promise<void> {
  if (existsSync(path.join(host.root, rel))) await host.call("read_file", { path: rel });
  const r = (await host.call("write_file", { path: rel, content })) as { status: string; reason?: string };
  assert.notEqual(r.status, "ok", `${rel} was written without asking: ${JSON.stringify(r)}`);
  assert.match(String(r.reason), /denied|runs later|hooksPath|include/i, JSON.stringify(r));
}

/** A contained `node -e` appending to `rel`: the error code it met (EROFS: read-only in the box). */
async function shellAppends(host: Host, rel: string, text: string): Promise<string> {
  const out = (await host.call("local_shell", {
    command: "node",
    args: [
      "-e",
      `try { require("fs").appendFileSync(${JSON.stringify(rel)}, ${JSON.stringify(text)}); console.log("WRITTEN") } catch (e) { console.log(e.code) }`,
    ],
  })) as { status: string; result?: { stdout?: string; contained?: boolean } };
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  return String(out.result!.stdout).trim();
}

test("a workspace that is a linked worktree: file tools write, and the hooks its repository names stay the user's", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-wtroot-");
  fx.git("config", "core.hooksPath", ".githooks");
  fx.write(".githooks/pre-commit", USERS_HOOK, 0o755);
  fx.git("add", ".githooks");
  fx.git("-c", "user.email=u@x", "-c", "user.name=u", "commit", "-q", "-m", "hooks");
  const wt = path.join(fx.base, "wt");
  fx.git("worktree", "add", "-q", "-b", "wt", wt);
  const host = await fx.host({ root: wt, envelope: "auto_edit", approver: denyApprover });
  try {
    // Ordinary writes work (review g8: every one threw ENOTDIR on `.git/config`, `.git` being a file).
    const w = (await host.call("write_file", { path: "notes.txt", content: "hello\n" })) as { status: string };
    assert.equal(w.status, "ok", JSON.stringify(w));
    assert.equal(readFileSync(path.join(wt, "notes.txt"), "utf8"), "hello\n");
    // The hooks the outside config names in this worktree: asked of the user, read-only in the box.
    await writeAsks(host, ".githooks/pre-commit", evilHook(fx));
    assert.equal(await shellAppends(host, ".githooks/pre-commit", `touch ${marker(fx)}\n`), "EROFS");
  } finally {
    host.close();
  }
  assert.equal(readFileSync(path.join(wt, ".githooks/pre-commit"), "utf8"), USERS_HOOK);
  const out = userCommits(fx, wt);
  assert.match(out, /users-own/, "the user's hook ran, as before");
  assert.equal(existsSync(marker(fx)), false, `the model's hook ran: ${out}`);
});

test("the user's own link to the hooks folder: both names asked, the folder read-only in the box", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-hooklink-");
  fx.write("scripts/hooks/pre-commit", USERS_HOOK, 0o755);
  symlinkSync("scripts/hooks", path.join(fx.root, ".githooks"));
  fx.git("config", "core.hooksPath", ".githooks");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    await writeAsks(host, ".githooks/pre-commit", evilHook(fx));
    await writeAsks(host, "scripts/hooks/pre-commit", evilHook(fx));
    assert.equal(await shellAppends(host, ".githooks/pre-commit", `touch ${marker(fx)}\n`), "EROFS");
    assert.equal(await shellAppends(host, "scripts/hooks/pre-commit", `touch ${marker(fx)}\n`), "EROFS");
    // Elsewhere under scripts/ is the model's to write.
    const ok = (await host.call("write_file", { path: "scripts/build.sh", content: "echo build\n" })) as {
      status: string;
    };
    assert.equal(ok.status, "ok", JSON.stringify(ok));
  } finally {
    host.close();
  }
  assert.equal(readFileSync(path.join(fx.root, "scripts/hooks/pre-commit"), "utf8"), USERS_HOOK);
  const out = userCommits(fx, fx.root);
  assert.match(out, /users-own/);
  assert.equal(existsSync(marker(fx)), false, `the model's hook ran: ${out}`);
});

test("a named include reached through a link the model made: the write asks, the shell's is undone", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-inclink-");
  fx.write("tools/README", "team tools\n");
  fx.git("config", "include.path", "../tools/local/gitconfig"); // optional, not there yet
  const evil = `[core]\n\tfsmonitor = "touch ${marker(fx)}; false"\n`;
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    // One call links tools/local to a folder of its own (nothing named is there yet: nothing to undo) ...
    assert.deepEqual(
      await undoneAfterNode(
        host,
        `const fs = require("fs"); fs.mkdirSync("scratch"); fs.symlinkSync("../scratch", "tools/local");`,
      ),
      [],
    );
    // ... and the file tool's write through it asks: it is the include git reads.
    await writeAsks(host, "tools/local/gitconfig", evil);
    assert.equal(existsSync(path.join(fx.root, "scratch/gitconfig")), false);
    // One call writes the file and links to it: the file is undone where it is.
    const undone = await undoneAfterNode(
      host,
      `const fs = require("fs"); fs.mkdirSync("scratch2"); fs.writeFileSync("scratch2/gitconfig", ${JSON.stringify(evil)}); fs.rmSync("tools/local"); fs.symlinkSync("../scratch2", "tools/local");`,
    );
    assert.deepEqual(
      undone.map((u) => u.path),
      ["scratch2/gitconfig"],
      JSON.stringify(undone),
    );
    assert.doesNotMatch(JSON.stringify(undone), /NOT undone/);
  } finally {
    host.close();
  }
  const out = userCommits(fx, fx.root);
  assert.equal(existsSync(marker(fx)), false, `the model's fsmonitor ran: ${out}`);
});

test("a relative hooksPath in the user's global config names each repository's folder", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-globalhooks-");
  const global = path.join(fx.home, "team.gitconfig");
  writeFileSync(global, "[core]\n\thooksPath = .githooks\n");
  fx.write(".githooks/pre-commit", USERS_HOOK, 0o755);
  // The sandbox's walk reads the process's environment, the file tools the host's: both say it.
  const was = process.env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_GLOBAL = global;
  const host = await fx.host({
    envelope: "auto_edit",
    approver: denyApprover,
    env: { PATH: process.env.PATH, HOME: fx.home, GIT_CONFIG_GLOBAL: global },
  });
  try {
    await writeAsks(host, ".githooks/pre-commit", evilHook(fx));
    assert.equal(await shellAppends(host, ".githooks/pre-commit", `touch ${marker(fx)}\n`), "EROFS");
  } finally {
    host.close();
    if (was === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = was;
  }
  assert.equal(readFileSync(path.join(fx.root, ".githooks/pre-commit"), "utf8"), USERS_HOOK);
  const out = userCommits(fx, fx.root, { GIT_CONFIG_GLOBAL: global });
  assert.match(out, /users-own/);
  assert.equal(existsSync(marker(fx)), false, `the model's hook ran: ${out}`);
});

test("a named include behind a dangling link, or missing several folders deep: the write that makes it asks", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-incdangling-");
  fx.write("tools/README", "team tools\n");
  fx.git("config", "include.path", "../tools/local/gitconfig");
  fx.git("config", "--add", "include.path", "../conf/a/b/gitconfig"); // three folders not there
  const evil = `[core]\n\tfsmonitor = "touch ${marker(fx)}; false"\n`;
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    // A link to a folder not made yet: git follows it when the folder is there.
    assert.deepEqual(await undoneAfterNode(host, `require("fs").symlinkSync("../scratch", "tools/local");`), []);
    await writeAsks(host, "scratch/gitconfig", evil);
    await writeAsks(host, "conf/a/b/gitconfig", evil);
    const ok = (await host.call("write_file", { path: "conf/a/notes.md", content: "x\n" })) as { status: string };
    assert.equal(ok.status, "ok", JSON.stringify(ok));
  } finally {
    host.close();
  }
  assert.equal(existsSync(path.join(fx.root, "scratch")), false);
  const out = userCommits(fx, fx.root);
  assert.equal(existsSync(marker(fx)), false, `the model's fsmonitor ran: ${out}`);
});

// Each a JS expression for the link's target (the relative one built at run time: as an argument, the
// shell planner itself refuses a path that leaves the workspace).
for (const target of [
  '"/proc/self/cwd/scratch"',
  '"//proc/self/cwd/scratch"',
  '"../".repeat(12) + "proc/self/cwd/scratch"',
])
  test(`a link into /proc/self/cwd on the way to a named include is removed (${target}): git and latch would follow it apart`, async () => {
    // Review g9: latch resolved `/proc/self/cwd` into its own folder, the user's git into the worktree;
    // review g10: the check read the link's text, and `//proc` or a relative spelling passed it.
    await requireSandbox();
    const fx = fixture("latch-sbx-proccwd-");
    fx.write("tools/README", "team tools\n");
    fx.git("config", "include.path", "../tools/local/gitconfig");
    const evil = `[core]\n\tfsmonitor = "touch ${marker(fx)}; false"\n`;
    const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
    try {
      const undone = await undoneAfterNode(
        host,
        `const fs = require("fs"); fs.mkdirSync("scratch"); fs.writeFileSync("scratch/gitconfig", ${JSON.stringify(evil)}); fs.symlinkSync(${target}, "tools/local");`,
      );
      assert.deepEqual(
        undone.map((u) => u.path),
        ["tools/local"],
        JSON.stringify(undone),
      );
    } finally {
      host.close();
    }
    assert.equal(existsSync(path.join(fx.root, "tools/local")), false);
    const out = userCommits(fx, fx.root);
    assert.equal(existsSync(marker(fx)), false, `the model's fsmonitor ran: ${out}`);
  });

test("a nested repository's hooks a global hooksPath names: the file tools ask there too", async () => {
  // Review g9: the box kept `sub/.githooks` read-only, but write_file there asked no one.
  await requireSandbox();
  const fx = fixture("latch-sbx-subhooks-");
  const global = path.join(fx.home, "team.gitconfig");
  writeFileSync(global, "[core]\n\thooksPath = .githooks\n");
  spawnSync("git", ["init", "-q", path.join(fx.root, "sub")]);
  fx.write("sub/.githooks/pre-commit", USERS_HOOK, 0o755);
  const host = await fx.host({
    envelope: "auto_edit",
    approver: denyApprover,
    env: { PATH: process.env.PATH, HOME: fx.home, GIT_CONFIG_GLOBAL: global },
  });
  try {
    await writeAsks(host, "sub/.githooks/pre-commit", evilHook(fx));
    const ok = (await host.call("write_file", { path: "sub/notes.md", content: "x\n" })) as { status: string };
    assert.equal(ok.status, "ok", JSON.stringify(ok));
  } finally {
    host.close();
  }
  assert.equal(readFileSync(path.join(fx.root, "sub/.githooks/pre-commit"), "utf8"), USERS_HOOK);
});

test("a workspace that is a folder of a repository: what that repository's config names inside it is kept", async () => {
  // A monorepo's package opened alone: the repository's `.git` is above the workspace, read-only in the
  // box, but its config may name hooks inside the package, which the user's commit at the top runs.
  await requireSandbox();
  const fx = fixture("latch-sbx-monorepo-");
  fx.write("app/.githooks/pre-commit", USERS_HOOK, 0o755);
  fx.write("app/src/main.ts", "export {};\n");
  fx.git("config", "core.hooksPath", "app/.githooks");
  const app = path.join(fx.root, "app");
  const host = await fx.host({ root: app, envelope: "auto_edit", approver: denyApprover });
  try {
    await writeAsks(host, ".githooks/pre-commit", evilHook(fx));
    assert.equal(await shellAppends(host, ".githooks/pre-commit", `touch ${marker(fx)}\n`), "EROFS");
    // Nothing else of the package asks.
    const ok = (await host.call("write_file", { path: "src/other.ts", content: "export {};\n" })) as { status: string };
    assert.equal(ok.status, "ok", JSON.stringify(ok));
  } finally {
    host.close();
  }
  assert.equal(readFileSync(path.join(app, ".githooks/pre-commit"), "utf8"), USERS_HOOK);
  const out = userCommits(fx, fx.root);
  assert.match(out, /users-own/);
  assert.equal(existsSync(marker(fx)), false, `the model's hook ran: ${out}`);
});

test("a path a nested repository's config names outside its own folder: the file tools ask", async () => {
  // Review g10: only the repositories on the way from the root to the written path were read.
  await requireSandbox();
  const fx = fixture("latch-sbx-nestednamed-");
  fx.write("tools/hooks/pre-commit", USERS_HOOK, 0o755);
  const lib = path.join(fx.root, "vendor/lib");
  spawnSync("git", ["init", "-q", lib]);
  spawnSync("git", ["-C", lib, "config", "core.hooksPath", "../../tools/hooks"]);
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    await writeAsks(host, "tools/hooks/pre-commit", evilHook(fx));
    const ok = (await host.call("write_file", { path: "tools/build.sh", content: "echo\n" })) as { status: string };
    assert.equal(ok.status, "ok", JSON.stringify(ok));
  } finally {
    host.close();
  }
  assert.equal(readFileSync(path.join(fx.root, "tools/hooks/pre-commit"), "utf8"), USERS_HOOK);
});
