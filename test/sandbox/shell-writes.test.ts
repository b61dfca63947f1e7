// A contained run with a writable workspace changes files latch's undo cannot restore: its result says
// so and lists what it created, modified and deleted (from a stat of the tree before and after), in
// the real bubblewrap sandbox. A read-only run has no list.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { makeSandboxFixture, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

type Out = { status: string; result?: Record<string, any> };

/** A fixture removed after the file: `files` written, then its host under auto_edit, which runs `node`
 * contained with a writable workspace and asks no one (a denying approver proves it). */
async function writable(prefix: string, files: Record<string, string>, before?: (fx: SandboxFixture) => void) {
  await requireSandbox();
  const fx = makeSandboxFixture(prefix);
  fixtures.push(fx);
  for (const [rel, text] of Object.entries(files)) fx.write(rel, text);
  before?.(fx);
  return { fx, host: await fx.host({ envelope: "auto_edit", approver: denyApprover }) };
}

test("a contained workspace-write run's result lists the files it changed and says undo does not cover them", async () => {
  const { fx, host } = await writable("latch-sbx-writes-", {
    "keep.txt": "same\n",
    "edit.txt": "old\n",
    "gone.txt": "bye\n",
    "deep/x.txt": "x\n",
  });
  const js = [
    `const fs = require("fs");`,
    `fs.writeFileSync("edit.txt", "new\\n");`,
    `fs.unlinkSync("gone.txt");`,
    `fs.mkdirSync("made/sub", { recursive: true });`,
    `fs.writeFileSync("made/sub/n.txt", "n\\n");`,
    // Same size, same content, written again: the inode's ctime moves, so it counts as modified.
    `fs.writeFileSync("deep/x.txt", "x\\n");`,
  ].join("\n");
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  assert.equal(out.result!.mode, "workspace-write");
  const w = out.result!.workspace_writes;
  assert.deepEqual(w.changed, [
    { path: "deep/x.txt", change: "modified" },
    { path: "edit.txt", change: "modified" },
    { path: "gone.txt", change: "deleted" },
    { path: "made/", change: "created" },
    { path: "made/sub/", change: "created" },
    { path: "made/sub/n.txt", change: "created" },
  ]);
  assert.equal(w.count, 6);
  assert.match(w.note, /not covered by undo/);
  assert.equal(existsSync(path.join(fx.root, "gone.txt")), false);
});

test("a workspace-write run that changes nothing lists nothing; a read-only run has no list", async () => {
  const { host } = await writable("latch-sbx-writes-none-", { "a.txt": "a\n" });
  const out = (await host.call("local_shell", { command: "node", args: ["-e", "1"] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.mode, "workspace-write");
  assert.deepEqual(out.result!.workspace_writes.changed, []);
  // `ls` is a read-only command: it runs read-only, and nothing can change.
  const ls = (await host.call("local_shell", { command: "ls" })) as Out;
  assert.equal(ls.status, "ok", JSON.stringify(ls));
  assert.notEqual(ls.result!.mode, "workspace-write");
  assert.equal(ls.result!.workspace_writes, undefined);
});

test("a run that makes a path past PATH_MAX still gets its result back", async () => {
  // Review h1: the list of changes lstat'ed each entry by its full path, which failed with
  // ENAMETOOLONG and threw out of the call: its result, and its outcome on the log, were lost.
  const { fx, host } = await writable("latch-shell-writes-long-", { "deep/.keep": "" });
  const js = [
    `const fs = require("fs"); process.chdir("deep"); const n = "a".repeat(200);`,
    `for (let i = 0; i < 30; i++) { fs.mkdirSync(n); process.chdir(n); }`,
    `fs.writeFileSync("f", "x"); console.log("MADE", 200 * 30);`,
  ].join("\n");
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  host.close();
  execFileSync("rm", ["-rf", path.join(fx.root, "deep")]); // rm walks by descriptors; Node's rmSync cannot
  assert.equal(out.status, "ok", JSON.stringify(out).slice(0, 2000));
  assert.match(String(out.result!.stdout), /MADE \d{4}/, JSON.stringify(out).slice(0, 2000));
  assert.equal(out.result!.exit_code, 0);
  // What it could name is listed; the rest is not compared.
  const writes = out.result!.workspace_writes as { changed: { path: string }[] };
  assert.ok(
    writes.changed.some((c) => c.path.startsWith("deep/aaaa")),
    JSON.stringify(writes).slice(0, 500),
  );
});

test("node_modules, site-packages and .git are compared by their own entry: a package added shows as the folder modified", async () => {
  // Its files were most of a JavaScript workspace's walk, twice a call; past 50,000 entries nothing was listed.
  const { fx, host } = await writable(
    "latch-shell-writes-nm-",
    {
      "package.json": "{}\n",
      "node_modules/old/index.js": "old\n",
      "web/node_modules/kept/index.js": "kept\n",
      ".venv/lib/python3.12/site-packages/old/__init__.py": "",
    },
    (f) => f.git("init", "-q"),
  );
  const install = [
    `const fs = require("fs");`,
    `fs.writeFileSync("package.json", '{"dependencies":{"new":"1"}}\\n');`,
    `fs.mkdirSync("node_modules/new/lib", { recursive: true });`,
    `fs.writeFileSync("node_modules/new/lib/index.js", "new\\n");`,
    `fs.writeFileSync("web/node_modules/kept/index.js", "changed in place\\n");`,
    `fs.mkdirSync(".venv/lib/python3.12/site-packages/new");`,
    `fs.writeFileSync(".venv/lib/python3.12/site-packages/new/__init__.py", "");`,
  ].join("\n");
  const out = (await host.call("local_shell", { command: "node", args: ["-e", install] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  const w = out.result!.workspace_writes;
  assert.deepEqual(w.changed, [
    { path: ".venv/lib/python3.12/site-packages/", change: "modified" },
    { path: "node_modules/", change: "modified" },
    { path: "package.json", change: "modified" },
  ]);
  assert.match(w.note, /A folder named \.git, node_modules or site-packages is not walked/);
  // A node_modules made or removed is listed as such, with the same note.
  const made = (await host.call("local_shell", {
    command: "node",
    args: ["-e", `require("fs").mkdirSync("app/node_modules/x", { recursive: true })`],
  })) as Out;
  assert.deepEqual(made.result!.workspace_writes.changed, [
    { path: "app/", change: "created" },
    { path: "app/node_modules/", change: "created" },
  ]);
  assert.match(made.result!.workspace_writes.note, /not walked/);
  // A commit renames git's index into place: .git is listed as modified, not its files; so is a
  // node_modules removed.
  fx.git("add", "-A");
  const commit = (await host.call("local_shell", {
    command: "node",
    args: [
      "-e",
      `const cp = require("child_process"); cp.execFileSync("git", ["-c", "user.name=m", "-c", "user.email=m@x", "commit", "-q", "-m", "m"]); require("fs").rmSync("app/node_modules", { recursive: true })`,
    ],
  })) as Out;
  assert.equal(commit.status, "ok", JSON.stringify(commit));
  assert.deepEqual(commit.result!.workspace_writes.changed, [
    { path: ".git/", change: "modified" },
    { path: "app/node_modules/", change: "deleted" },
  ]);
  assert.match(
    commit.result!.workspace_writes.note,
    /A folder named \.git, node_modules or site-packages is not walked/,
  );
  // A run that changes nothing of it says nothing of it.
  const none = (await host.call("local_shell", {
    command: "node",
    args: ["-e", `require("fs").writeFileSync("a.txt", "a")`],
  })) as Out;
  assert.deepEqual(none.result!.workspace_writes.changed, [{ path: "a.txt", change: "created" }]);
  assert.doesNotMatch(none.result!.workspace_writes.note, /node_modules/);
  host.close();
});
