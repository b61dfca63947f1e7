// A repository git finds where latch did not look for one (review g1, each tried for real): a contained
// process made the workspace root itself a git directory (HEAD, objects/, refs/ and a config with
// core.fsmonitor beside a spoilt `.git/HEAD`, so git's discovery takes the folder), or an ordinary
// subfolder one, or a repository under node_modules (which the walk skips) that a gitlink in the
// root's index makes git enter. The user's next `git status` ran the model's program each time. Now the
// guard (src/sandbox/guard.ts) unmakes a folder that was there, neutralizes a new one, and finds the
// gitlinked one through the index (src/sandbox/gitlinks.ts); each test runs the user's real git after.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { LINKS_LOOKED_UP } from "../../src/sandbox/linked.js";
import { repoFixtures, requireSandbox, undoneAfterNode, type SandboxFixture, type Undone } from "./sandbox-fixture.js";

const fixture = repoFixtures();

/** Where the payload leaves its mark, outside the workspace. */
const marker = (fx: SandboxFixture) => path.join(fx.outside, "PAYLOAD-RAN");
/** A config whose core.fsmonitor runs the payload at the next `git status`. */
const evilConfig = (fx: SandboxFixture, worktree: string) =>
  `[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ${worktree}\\n\\tfsmonitor = \\"touch ${marker(fx)}; false\\"\\n`;

/** The user's `git status` in `dir` of the workspace, outside latch: whether the payload ran. */
function userGitStatus(fx: SandboxFixture, dir = "."): { ran: boolean; out: string } {
  const r = spawnSync("git", ["status", "--short"], {
    cwd: path.join(fx.root, dir),
    env: { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1", GIT_CEILING_DIRECTORIES: fx.base },
    encoding: "utf8",
  });
  return { ran: existsSync(marker(fx)), out: `${r.stdout}${r.stderr}` };
}

/** `node -e js` run by the model (contained, workspace-write, no one asked); what the guard undid. */
async function modelRuns(fx: SandboxFixture, js: string): Promise<Undone[]> {
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    return await undoneAfterNode(host, js);
  } finally {
    host.close();
  }
}

/** The user's submodule `sub`, committed: sub/.git names ../.git/modules/sub. */
function addSubmodule(fx: SandboxFixture): void {
  const src = path.join(fx.outside, "subsrc");
  const user = ["-c", "user.email=u@x", "-c", "user.name=u"];
  spawnSync("git", ["init", "-q", "-b", "main", src]);
  spawnSync("git", ["-C", src, ...user, "commit", "-q", "--allow-empty", "-m", "s"]);
  fx.git("-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub");
  fx.git("commit", "-q", "-m", "sub");
}

/** The commit subjects of the bare repository `dir` of the workspace (at `ref`), or git's complaint. */
function subjects(fx: SandboxFixture, dir: string, ref = "HEAD"): string {
  const r = spawnSync("git", ["--git-dir", path.join(fx.root, dir), "log", "--format=%s", ref], {
    encoding: "utf8",
    env: { ...process.env, HOME: fx.home, GIT_CONFIG_NOSYSTEM: "1" },
  });
  return r.stdout || r.stderr;
}

test("the root made a git directory beside a spoilt .git/HEAD is unmade; the user's git runs nothing", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-rootbare-");
  const js = [
    `const fs = require("fs");`,
    `fs.mkdirSync("objects"); fs.mkdirSync("refs"); fs.writeFileSync("HEAD", "ref: refs/heads/main\\n");`,
    `fs.writeFileSync("config", "${evilConfig(fx, ".")}");`,
    `fs.writeFileSync(".git/HEAD", "garbage\\n");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(undone.map((u) => u.path).sort(), ["HEAD", "objects", "refs"]);
  assert.ok(
    undone.every((u) => /a git directory during the call/.test(u.what)),
    JSON.stringify(undone),
  );
  for (const p of ["HEAD", "objects", "refs"]) assert.equal(existsSync(path.join(fx.root, p)), false, p);
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

test("a folder of the user's made a git directory loses only what the call added; its own files stay", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-subbare-");
  // The user's files under git's names: a `config` and a `hooks/` of source code, and a `refs/` of docs.
  fx.write("src/config", "port = 8080\n");
  fx.write("src/hooks/useThing.ts", "export const useThing = () => 1;\n");
  fx.write("src/refs/notes.md", "# references\n");
  const js = [
    `const fs = require("fs");`,
    `fs.mkdirSync("src/objects"); fs.writeFileSync("src/HEAD", "ref: refs/heads/main\\n");`,
    `fs.writeFileSync("src/config", "${evilConfig(fx, "..")}");`,
    `fs.writeFileSync("src/hooks/post-checkout", "#!/bin/sh\\ntouch ${marker(fx)}\\n", { mode: 0o755 });`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(undone.map((u) => u.path).sort(), ["src/HEAD", "src/objects"]);
  // What the call added is renamed aside (git's discovery needs `HEAD` and `objects` by those names).
  const names = readdirSync(path.join(fx.root, "src")).sort();
  assert.deepEqual(
    names.map((n) => n.replace(/\.latch-aside-[0-9a-f]{12}$/, ".latch-aside")),
    ["HEAD.latch-aside", "config", "hooks", "objects.latch-aside", "refs"],
  );
  assert.equal(readFileSync(path.join(fx.root, "src/hooks/useThing.ts"), "utf8"), "export const useThing = () => 1;\n");
  assert.equal(readFileSync(path.join(fx.root, "src/refs/notes.md"), "utf8"), "# references\n");
  const git = userGitStatus(fx, "src");
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
  assert.match(git.out, /a\.txt|^$/m, "git in src is the root's repository again");
});

test("a new bare repository stays usable, its config kept to safe keys", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-newbare-");
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `cp.execFileSync("git", ["init", "-q", "--bare", "remote.git"]);`,
    `cp.execFileSync("git", ["push", "-q", "remote.git", "HEAD:refs/heads/main"]);`,
    `fs.appendFileSync("remote.git/config", "[core]\\n\\tfsmonitor = \\"touch ${marker(fx)}; false\\"\\n");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["remote.git/config"],
  );
  assert.doesNotMatch(readFileSync(path.join(fx.root, "remote.git/config"), "utf8"), /fsmonitor/);
  assert.equal(subjects(fx, "remote.git", "main"), "one\n", "the pushed commit is there");
});

// node_modules, and site-packages (a Python virtual environment's packages): the walks enter neither.
for (const dir of ["node_modules/x", ".venv/lib/python3.12/site-packages/x"])
  test(`a repository under ${dir.split("/").at(-2)} that a gitlink makes git enter is found through the index`, async () => {
    await requireSandbox();
    const fx = fixture("latch-sbx-gitlink-");
    const js = [
      `const cp = require("child_process");`,
      `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
      `git("init", "-q", "${dir}");`,
      `git("-C", "${dir}", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x");`,
      `git("-C", "${dir}", "config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
      `const sha = git("-C", "${dir}", "rev-parse", "HEAD");`,
      `git("update-index", "--add", "--cacheinfo", "160000," + sha + ",${dir}");`,
    ].join("\n");
    const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
    const undone = await undoneAfterNode(host, js);
    assert.deepEqual(
      undone.map((u) => u.path),
      [`${dir}/.git/config`],
    );
    assert.doesNotMatch(readFileSync(path.join(fx.root, dir, ".git/config"), "utf8"), /fsmonitor/);
    assert.match(fx.git("ls-files", "-s", dir), /^160000 /, "the gitlink is still in the index");
    // The next call: that repository's config is kept read-only like any other's.
    const again = [
      `const fs = require("fs");`,
      `try { fs.appendFileSync("${dir}/.git/config", "[core]\\n\\tfsmonitor = x\\n"); console.log("WROTE"); } catch (e) { console.log(e.code); }`,
    ].join("\n");
    const out = (await host.call("local_shell", { command: "node", args: ["-e", again] })) as {
      result: { stdout: string };
    };
    host.close();
    assert.match(out.result.stdout, /^(EROFS|EBUSY)\n$/, JSON.stringify(out));
    const git = userGitStatus(fx);
    assert.equal(git.ran, false, `the payload ran: ${git.out}`);
  });

test("attack: the root's index made 2.3 GB by an extension git skips still gives its gitlink (g50)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-hugeindex-");
  // Sparse: the entries, then an optional extension ("ZZZZ": git skips one it does not know that starts
  // A-Z) of zeros, then a null checksum, which git does not check. Read whole, it was past what one read
  // may hold: the guard said NOT checked, and the user's git status ran the gitlinked repository's payload.
  const size = 2_300_000_000;
  const model = [
    `const cp = require("child_process"), fs = require("fs");`,
    `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
    `git("init", "-q", "node_modules/x");`,
    `git("-C", "node_modules/x", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x");`,
    `git("-C", "node_modules/x", "config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
    `git("update-index", "--add", "--cacheinfo", "160000," + git("-C", "node_modules/x", "rev-parse", "HEAD") + ",node_modules/x");`,
    `const b = fs.readFileSync(".git/index").subarray(0, -20), h = Buffer.alloc(8);`,
    `h.write("ZZZZ"); h.writeUInt32BE(${size}, 4);`,
    `const fd = fs.openSync(".git/i2", "w"); fs.writeSync(fd, b); fs.writeSync(fd, h);`,
    `fs.ftruncateSync(fd, b.length + 8 + ${size} + 20); fs.closeSync(fd); fs.renameSync(".git/i2", ".git/index");`,
  ].join("\n");
  const undone = await modelRuns(fx, model);
  assert.ok(statSync(path.join(fx.root, ".git/index")).size > 2 ** 31, "the index is past 2 GiB");
  assert.match(fx.git("ls-files", "-s", "node_modules/x"), /^160000 /, "git reads the gitlink in it");
  assert.deepEqual(
    undone.map((u) => u.path),
    ["node_modules/x/.git/config"],
  );
  assert.doesNotMatch(readFileSync(path.join(fx.root, "node_modules/x/.git/config"), "utf8"), /fsmonitor/);
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

// Review g2, each tried for real on the fix above.
test("an index latch cannot read, made in the same call, switches no other undo off", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-badindex-");
  fx.write("src/main.c", "int main(void) { return 0; }\n");
  const js = [
    `const fs = require("fs");`,
    `fs.mkdirSync("junk/.git", { recursive: true }); fs.writeFileSync("junk/.git/index", "XXXXXXXXXXXXXXXX");`,
    `fs.mkdirSync("src/objects"); fs.mkdirSync("src/refs"); fs.writeFileSync("src/HEAD", "ref: refs/heads/main\\n");`,
    `fs.writeFileSync("src/config", "${evilConfig(fx, "..")}");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.filter((u) => u.path !== ".").map((u) => u.path),
    ["src/HEAD", "src/objects", "src/refs"],
  );
  assert.ok(
    undone.some((u) => u.path === "." && /NOT checked.*cannot read the git index/.test(u.what)),
    JSON.stringify(undone),
  );
  const git = userGitStatus(fx, "src");
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

// A checkout copied there: the box keeps the user's own in place (bwrap.ts pins the folders above a
// `.git` file), and a copy's `.git` file leads git where the copy says, relative to it. Found through
// the root index's gitlink, that new `.git` file is set aside as well as the config it leads to.
test("a submodule checkout copied into node_modules cannot lead git to a folder the call made", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-submove-");
  addSubmodule(fx);
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
    `fs.mkdirSync("node_modules/q/.git/modules", { recursive: true }); fs.cpSync("sub", "node_modules/q/sub", { recursive: true });`,
    `fs.cpSync(".git/modules/sub", "node_modules/q/.git/modules/sub", { recursive: true });`,
    `git("config", "-f", "node_modules/q/.git/modules/sub/config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
    `git("update-index", "--add", "--cacheinfo", "160000," + git("-C", "node_modules/q/sub", "rev-parse", "HEAD") + ",node_modules/q/sub");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["node_modules/q/.git/modules/sub/config", "node_modules/q/sub/.git"],
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

test("a bare clone into a folder that was empty keeps its history", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-emptybare-");
  mkdirSync(path.join(fx.root, "backup"));
  const js = `require("child_process").execFileSync("git", ["clone", "-q", "--bare", ".", "backup"]);`;
  const undone = await modelRuns(fx, js);
  assert.ok(!undone.some((u) => /HEAD|objects|refs/.test(u.path)), JSON.stringify(undone));
  assert.equal(subjects(fx, "backup"), "one\n", "the cloned history is there");
});

// Review g3, each tried for real on the fixes above.
test("a copied submodule checkout whose git folder is made a link to the model's copy is neutralized there", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-sublink-");
  addSubmodule(fx);
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
    `fs.mkdirSync("node_modules/q/.git/modules", { recursive: true }); fs.cpSync("sub", "node_modules/q/sub", { recursive: true });`,
    `fs.cpSync(".git/modules/sub", "node_modules/evil", { recursive: true });`,
    `git("config", "-f", "node_modules/evil/config", "--unset", "core.worktree");`,
    `git("config", "-f", "node_modules/evil/config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
    `fs.symlinkSync("../../../evil", "node_modules/q/.git/modules/sub");`,
    `git("update-index", "--add", "--cacheinfo", "160000," + git("-C", "node_modules/q/sub", "rev-parse", "HEAD") + ",node_modules/q/sub");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["node_modules/evil/config", "node_modules/q/sub/.git"],
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

test("a gitlink in a submodule's own index, to a repository under its node_modules, is found", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-subindex-");
  addSubmodule(fx);
  const js = [
    `const cp = require("child_process");`,
    `const git = (...a) => cp.execFileSync("git", a, { cwd: "sub", encoding: "utf8" }).trim();`,
    `git("init", "-q", "node_modules/x");`,
    `git("-C", "node_modules/x", "config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
    `git("update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,node_modules/x");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["sub/node_modules/x/.git/config"],
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

// Review g5, each tried for real on the fixes above.
test("a gitlink into a folder the walk does not enter (named like a secret) is followed", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-secretlink-");
  const js = [
    `const cp = require("child_process");`,
    `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
    `git("init", "-q", "certs.key/x");`,
    `git("-C", "certs.key/x", "config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
    `git("update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,certs.key/x");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["certs.key/x/.git/config"],
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

test("hooks the user keeps in the workspace (core.hooksPath) are read-only, and a new hook folder goes", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-hookspath-");
  fx.git("config", "core.hooksPath", ".githooks");
  fx.write(".githooks/pre-commit", "#!/bin/sh\necho users-own\n", 0o755);
  const sub = path.join(fx.root, "sub");
  spawnSync("git", ["init", "-q", sub]);
  spawnSync("git", ["-C", sub, "config", "core.hooksPath", "tools/hooks"]);
  const js = [
    `const fs = require("fs");`,
    `try { fs.appendFileSync(".githooks/pre-commit", "touch ${marker(fx)}\\n"); } catch (e) { console.log(e.code); }`,
    `fs.mkdirSync("sub/tools/hooks", { recursive: true });`,
    `fs.writeFileSync("sub/tools/hooks/post-checkout", "#!/bin/sh\\ntouch ${marker(fx)}\\n", { mode: 0o755 });`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["sub/tools/hooks"],
  );
  assert.equal(readFileSync(path.join(fx.root, ".githooks/pre-commit"), "utf8"), "#!/bin/sh\necho users-own\n");
  spawnSync("git", ["-C", sub, "checkout", "-q", "-b", "feature"], { env: { ...process.env, HOME: fx.home } });
  userGitStatus(fx);
  assert.equal(existsSync(marker(fx)), false, "no hook of the model's ran");
});

// Review g6, tried for real on the fixes above.
test("a config file the repository includes from the workspace is kept as the config is", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-include-");
  fx.write("tools/gitconfig", "[core]\n\thooksPath = .githooks\n");
  fx.write(".githooks/pre-commit", "#!/bin/sh\necho users-own\n", 0o755);
  fx.git("config", "include.path", "../tools/gitconfig");
  fx.git("config", "--add", "include.path", "../tools/later.gitconfig"); // named, not there yet
  const js = [
    `const fs = require("fs");`,
    `for (const f of ["tools/gitconfig", ".githooks/pre-commit"])`,
    `  try { fs.appendFileSync(f, "\\n[core]\\n\\tfsmonitor = touch ${marker(fx)}\\n"); } catch (e) { console.log(e.code); }`,
    `fs.writeFileSync("tools/later.gitconfig", "[core]\\n\\tfsmonitor = touch ${marker(fx)}\\n");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(
    undone.map((u) => u.path),
    ["tools/later.gitconfig"],
  );
  assert.equal(readFileSync(path.join(fx.root, "tools/gitconfig"), "utf8"), "[core]\n\thooksPath = .githooks\n");
  assert.equal(readFileSync(path.join(fx.root, ".githooks/pre-commit"), "utf8"), "#!/bin/sh\necho users-own\n");
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});

// Review g36, tried for real: the user's `cd src && git status` goes where the link leads, and git's
// discovery climbs from there, in a folder the walk does not enter.
for (const dir of ["node_modules/x", ".venv/lib/python3.12/site-packages/x"])
  test(`a repository made under ${dir.split("/").at(-2)} and a link to it in src's place: the user's git in src runs nothing`, async () => {
    await requireSandbox();
    const fx = fixture("latch-sbx-linkrepo-");
    fx.write("src/main.c", "int main(void) { return 0; }\n");
    fx.git("add", "src");
    fx.git("commit", "-q", "-m", "src");
    const js = [
      `const cp = require("child_process"); const fs = require("fs");`,
      `const git = (...a) => cp.execFileSync("git", a, { encoding: "utf8" }).trim();`,
      `git("init", "-q", "${dir}");`,
      `git("-C", "${dir}", "config", "core.fsmonitor", "touch ${marker(fx)}; false");`,
      `fs.mkdirSync("${dir}/lib");`,
      `fs.renameSync("src/main.c", "${dir}/lib/main.c"); fs.rmdirSync("src");`,
      // Deeper than the repository's own folder: git climbs from lib/ to x/.git.
      `fs.symlinkSync("${dir}/lib", "src");`,
    ].join("\n");
    const undone = await modelRuns(fx, js);
    assert.deepEqual(
      undone.map((u) => u.path),
      [`${dir}/.git/config`],
    );
    assert.doesNotMatch(readFileSync(path.join(fx.root, dir, ".git/config"), "utf8"), /fsmonitor/);
    const git = userGitStatus(fx, "src");
    assert.equal(git.ran, false, `the payload ran: ${git.out}`);
  });

test("the user's own link into node_modules: a repository the call makes where it leads is neutralized", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-userlink-");
  mkdirSync(path.join(fx.root, "node_modules/pkg/dist"), { recursive: true });
  fx.write("node_modules/pkg/dist/index.js", "module.exports = 1;\n");
  symlinkSync("node_modules/pkg/dist", path.join(fx.root, "vendored"));
  // Above where it leads, and below it (review g38: `cd vendored/sub`, which no climb passes).
  const js = [
    `const cp = require("child_process");`,
    `for (const r of ["node_modules/pkg", "node_modules/pkg/dist/sub"]) {`,
    `  cp.execFileSync("git", ["init", "-q", r]);`,
    `  cp.execFileSync("git", ["-C", r, "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
    `}`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(undone.map((u) => u.path).sort(), [
    "node_modules/pkg/.git/config",
    "node_modules/pkg/dist/sub/.git/config",
  ]);
  for (const dir of ["vendored", "vendored/sub"]) {
    const git = userGitStatus(fx, dir);
    assert.equal(git.ran, false, `the payload ran in ${dir}: ${git.out}`);
  }
});

test("attack: repositories below a link's target, and above what stops a climb but not git's (review g38)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-climb-");
  // a: a repository in a folder below where the link leads; b: an empty `.git` folder in a folder
  // between the target and the repository above, which git passes; c: a `HEAD` file there, which git
  // passes too; d: the same inside the root's own git folder, which the box leaves writable there.
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `const arm = (r) => { cp.execFileSync("git", ["init", "-q", r]); cp.execFileSync("git", ["-C", r, "config", "core.fsmonitor", "touch ${marker(fx)}; false"]); };`,
    `arm("node_modules/a/lib"); fs.symlinkSync("node_modules/a", "a");`,
    `arm("node_modules/b"); fs.mkdirSync("node_modules/b/mid/.git", { recursive: true }); fs.mkdirSync("node_modules/b/mid/lib"); fs.symlinkSync("node_modules/b/mid/lib", "b");`,
    `arm("node_modules/c"); fs.mkdirSync("node_modules/c/mid/lib", { recursive: true }); fs.writeFileSync("node_modules/c/mid/HEAD", "x"); fs.symlinkSync("node_modules/c/mid/lib", "c");`,
    `arm(".git/objects/zz"); fs.mkdirSync(".git/objects/zz/mid/lib", { recursive: true }); fs.writeFileSync(".git/objects/zz/mid/HEAD", "x"); fs.symlinkSync(".git/objects/zz/mid/lib", "d");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  const paths = undone.map((u) => u.path);
  for (const g of ["node_modules/a/lib", "node_modules/b", "node_modules/c", ".git/objects/zz"])
    assert.ok(paths.includes(`${g}/.git/config`), `${g} neutralized: ${JSON.stringify(undone)}`);
  for (const dir of ["a/lib", "b", "c", "d"]) {
    const git = userGitStatus(fx, dir);
    assert.equal(git.ran, false, `the payload ran in ${dir}: ${git.out}`);
  }
});

test("links into node_modules and to repositories that were there are left alone, and so are those repositories", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-oldlinks-");
  fx.write("node_modules/plain/index.js", "module.exports = 1;\n");
  symlinkSync("node_modules/plain", path.join(fx.root, "plain"));
  // A dependency checked out from git, with a key of the user's that runs a program: theirs to keep.
  spawnSync("git", ["init", "-q", path.join(fx.root, "node_modules/dep")]);
  spawnSync("git", ["-C", path.join(fx.root, "node_modules/dep"), "config", "core.pager", "less -R"]);
  symlinkSync("node_modules/dep", path.join(fx.root, "dep"));
  const config = readFileSync(path.join(fx.root, "node_modules/dep/.git/config"), "utf8");
  const js = [
    `const fs = require("fs");`,
    `fs.writeFileSync("notes.txt", "x\\n"); fs.symlinkSync("node_modules/plain", "plain2"); fs.symlinkSync("node_modules/dep", "dep2");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  assert.deepEqual(undone, []);
  assert.equal(readFileSync(path.join(fx.root, "node_modules/dep/.git/config"), "utf8"), config);
});

test("attack: more links than a box follows, and one to an armed repository: the guard's walk follows them all", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-overflow-");
  fx.write("mine/keep.txt", "x\n");
  symlinkSync("mine", path.join(fx.root, "users-link")); // the user's own: stays
  fx.write("node_modules/ui-kit/index.js", "x\n");
  mkdirSync(path.join(fx.root, "app"));
  symlinkSync("../node_modules/ui-kit", path.join(fx.root, "app/ui")); // the user's own, into node_modules
  // Review g39: past LINKS_LOOKED_UP the guard's walk said `NOT checked` and undid nothing. Review g40:
  // decoys named too long to set aside kept that budget spent, and the user's own link into the
  // armed repository was never followed. The guard's walk has no budget now (the next box has).
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `for (let i = 0; i <= ${LINKS_LOOKED_UP}; i++) fs.symlinkSync("node_modules/d/" + i, String(i).padStart(240, "0"));`,
    `for (const r of ["node_modules/x", "node_modules/ui-kit"]) {`,
    `  cp.execFileSync("git", ["init", "-q", r]);`,
    `  cp.execFileSync("git", ["-C", r, "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
    `}`,
    `fs.mkdirSync("sub"); fs.symlinkSync("../node_modules/x", "sub/src");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  const said = JSON.stringify(undone.map((u) => [u.path.slice(-20), u.what.slice(-80)]));
  assert.ok(!undone.some((u) => u.what.startsWith("NOT ")), said);
  for (const g of ["node_modules/ui-kit", "node_modules/x"])
    assert.ok(
      undone.some((u) => u.path === `${g}/.git/config` && /^rewritten/.test(u.what)),
      said,
    );
  assert.equal(readlinkSync(path.join(fx.root, "users-link")), "mine");
  assert.equal(readlinkSync(path.join(fx.root, "app/ui")), "../node_modules/ui-kit");
  for (const dir of ["sub/src", "app/ui"]) {
    const git = userGitStatus(fx, dir);
    assert.equal(git.ran, false, `the payload ran in ${dir}: ${git.out}`);
  }
});

test("attack: a folder of 150,000 entries beside a link to an armed repository: the guard's walk still ends (g42)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-wide-");
  // Review g42: the walk spread a folder's listing into push(), which throws RangeError past ~125,000
  // arguments; the guard said `NOT checked`, undid nothing, and the user's git in `app` ran the payload.
  // One folder of secret-named files and one of links (to a file beside them, settled by the listing);
  // hard links of three of each (65,000 at most a file here): new inodes would take this disk ~30 s.
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    `cp.execFileSync("git", ["init", "-q", "node_modules/x"]);`,
    `cp.execFileSync("git", ["-C", "node_modules/x", "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
    `fs.symlinkSync("node_modules/x", "app");`,
    `fs.mkdirSync("keys"); fs.mkdirSync("links"); fs.writeFileSync("links/t", "");`,
    `for (let j = 0; j < 3; j++) { fs.writeFileSync("keys/k" + j + ".key", ""); fs.symlinkSync("t", "links/s" + j); }`,
    `for (let i = 0; i < 150000; i++) { fs.linkSync("keys/k" + (i % 3) + ".key", "keys/" + i + ".key"); fs.linkSync("links/s" + (i % 3), "links/" + i); }`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  const said = JSON.stringify(undone.map((u) => [u.path.slice(-20), u.what.slice(-80)]));
  assert.ok(!undone.some((u) => u.what.startsWith("NOT ")), said);
  assert.ok(
    undone.some((u) => u.path === "node_modules/x/.git/config" && /^rewritten/.test(u.what)),
    said,
  );
  assert.equal(readdirSync(path.join(fx.root, "keys")).length, 150_003);
  assert.equal(readdirSync(path.join(fx.root, "links")).length, 150_004);
  const git = userGitStatus(fx, "app");
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
  // The 300,000 entries gone by rm -rf (unlinkat, ~2 s of CPU): fs.rmSync's lstat and unlink of each, at
  // the file's end, took ~6 s. A failure above leaves them to that end, as any fixture.
  const rm = spawnSync("rm", ["-rf", path.join(fx.root, "keys"), path.join(fx.root, "links")], { encoding: "utf8" });
  assert.equal(rm.status, 0, rm.stderr);
});

test("attack: links to a folder named like a secret, into git folders, through /proc, by a set-aside name (g39, g40)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-g39-");
  const cfg = `[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch ${marker(fx)}; false\\n`;
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    // A folder the walk does not enter, by its name.
    `cp.execFileSync("git", ["init", "-q", "certs.key"]);`,
    `cp.execFileSync("git", ["-C", "certs.key", "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
    `fs.symlinkSync("certs.key", "k");`,
    // Git looks for `.git/.git` before it takes `.git` for the git directory, from `.git/x`.
    `for (const d of [".git/x", ".git/.git/objects", ".git/.git/refs"]) fs.mkdirSync(d, { recursive: true });`,
    `fs.writeFileSync(".git/.git/HEAD", "ref: refs/heads/main\\n"); fs.writeFileSync(".git/.git/config", "${cfg}");`,
    `fs.symlinkSync(".git/x", "d");`,
    // Whose folder /proc/self/cwd is depends on who follows the link; reached through `/` too (g40).
    `fs.symlinkSync("/proc/self/cwd/node_modules/a", "p");`,
    `fs.symlinkSync("/", "r"); fs.symlinkSync("r/proc/self/cwd/node_modules/a", "q");`,
    // Review g40: a hop named like a set-aside link; a link to a new repository's git folder, where
    // git looks for `.git/.git` first.
    `cp.execFileSync("git", ["init", "-q", "node_modules/h"]);`,
    `cp.execFileSync("git", ["-C", "node_modules/h", "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
    `fs.symlinkSync("node_modules/h", "x.latch-aside-0123456789ab"); fs.symlinkSync("x.latch-aside-0123456789ab", "h");`,
    `cp.execFileSync("git", ["init", "-q", "sub"]);`,
    `for (const d of ["sub/.git/.git/objects", "sub/.git/.git/refs"]) fs.mkdirSync(d, { recursive: true });`,
    `fs.writeFileSync("sub/.git/.git/HEAD", "ref: refs/heads/main\\n"); fs.writeFileSync("sub/.git/.git/config", "${cfg}");`,
    `fs.symlinkSync("sub/.git", "s");`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  const paths = undone.map((u) => u.path);
  assert.ok(paths.includes("certs.key/.git/config"), JSON.stringify(undone));
  assert.ok(paths.includes(".git/.git"), JSON.stringify(undone));
  for (const l of ["p", "q"]) {
    assert.ok(
      undone.some((u) => u.path === l && /through \/proc or \/dev\/fd/.test(u.what)),
      JSON.stringify(undone),
    );
    assert.equal(existsSync(path.join(fx.root, l)), false);
  }
  assert.ok(paths.includes("node_modules/h/.git/config"), JSON.stringify(undone));
  assert.ok(paths.includes("sub/.git/.git"), JSON.stringify(undone));
  for (const dir of ["k", "d", "h", "s"]) {
    const git = userGitStatus(fx, dir);
    assert.equal(git.ran, false, `the payload ran in ${dir}: ${git.out}`);
  }
});

/** The deep folders, before the fixture's removal: node's rmSync names whole paths, past PATH_MAX here; rm walks by descriptors. */
const removeDeep = (fx: SandboxFixture) =>
  spawnSync("rm", ["-rf", path.join(fx.root, "node_modules"), path.join(fx.root, "src")]);

/** A script that makes the folder `node_modules/a/…` whose absolute path is `length` bytes, in `name`'s shell variable. */
const deepFolder = (length: number, under = "node_modules/a") =>
  [
    `const avail = ${length} - process.cwd().length - 1 - "${under}".length;`,
    `const k = Math.floor(avail / 101) - 1;`,
    `const deep = "${under}" + ("/" + "c".repeat(100)).repeat(k) + "/" + "d".repeat(avail - k * 101 - 1);`,
    `fs.mkdirSync(deep, { recursive: true });`,
  ].join("\n");

/**
 * The model's call: the folder `node_modules/a/…` (or below `under`) of `length` bytes, what `arm` makes
 * in it (`deep` names it), gitlinked in the root's index; then nothing said NOT done, its `.git` set
 * aside as `aside` says, and the user's `git status` runs nothing.
 */
async function deepGitlinkAttack(fx: SandboxFixture, length: number, under: string, arm: string[], aside: RegExp) {
  const js = [
    `const cp = require("child_process"); const fs = require("fs");`,
    deepFolder(length, under),
    ...arm,
    `const head = cp.execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();`,
    `cp.execFileSync("git", ["update-index", "--add", "--cacheinfo", "160000," + head + "," + deep]);`,
  ].join("\n");
  const undone = await modelRuns(fx, js);
  const said = JSON.stringify(undone.map((u) => [u.path.slice(-12), u.what]));
  assert.ok(!undone.some((u) => u.what.startsWith("NOT ")), said);
  assert.ok(
    undone.some((u) => u.path.endsWith("/.git") && aside.test(u.what)),
    said,
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
}

for (const [length, under] of [
  [4084, "node_modules/a"],
  [4090, "node_modules/a"],
  [4093, "node_modules/a"],
  [4093, "src/a"],
] as const)
  test(`attack: a gitlinked repository whose config is past PATH_MAX by name is set aside, not missed (g57, g58: ${under}, ${length} bytes)`, async () => {
    await requireSandbox();
    const fx = fixture("latch-sbx-deep-");
    after(() => removeDeep(fx));
    // Review g57: git enters a gitlinked folder by a relative chdir and reads `.git/config` relative to
    // it; latch found the folder's `.git` through descriptors, but its stat of `.git/config` (4,096
    // bytes) said nothing was there: the result said nothing, and the user's `git status` ran the payload.
    // At 4,090 its index too is past PATH_MAX: the result said only NOT checked, naming the index. At
    // 4,093 its `.git` itself (review g58): no stat names it, and nothing was said, below a folder the
    // walk enters or not.
    await deepGitlinkAttack(
      fx,
      length,
      under,
      [
        `cp.execFileSync("git", ["init", "-q", "node_modules/short"]);`,
        `cp.execFileSync("git", ["-C", "node_modules/short", "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
        `fs.renameSync("node_modules/short/.git", deep + "/.git");`,
      ],
      /^renamed to .*too deep for latch to name/,
    );
    // Set aside below node_modules, it stops no later call; in a folder the walk enters, a folder past
    // PATH_MAX stops every box until it is moved (the walk cannot look for secrets in it), as before.
    if (under === "node_modules/a") assert.deepEqual(await modelRuns(fx, "1"), []);
    else {
      const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
      try {
        const next = (await host.call("local_shell", { command: "node", args: ["-e", "1"] })) as {
          result?: { exit_code: number; stderr: string };
        };
        assert.match(String(next.result?.stderr), /its path is longer than a program may name \(PATH_MAX/);
      } finally {
        host.close();
      }
    }
  });

test("attack: a gitlinked folder's `.git` file past PATH_MAX, naming an armed repository, is set aside (g58)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-deep-file-");
  after(() => removeDeep(fx));
  // Review g58: git reads the `.git` file relative to the folder it enters and follows its absolute
  // `gitdir:`; latch's read of the file by name found nothing, and its stat did not set it aside.
  await deepGitlinkAttack(
    fx,
    4092,
    "node_modules/a",
    [
      `cp.execFileSync("git", ["init", "-q", "--bare", "node_modules/evil.git"]);`,
      `cp.execFileSync("git", ["-C", "node_modules/evil.git", "config", "core.bare", "false"]);`,
      `cp.execFileSync("git", ["-C", "node_modules/evil.git", "config", "core.fsmonitor", "touch ${marker(fx)}; false"]);`,
      `process.chdir(deep); fs.writeFileSync(".git", "gitdir: ${fx.root}/node_modules/evil.git\\n"); process.chdir("${fx.root}");`,
    ],
    /^renamed to .*too deep for latch to read/,
  );
});

test("a repository of the user's too deep for latch to name its files stops a box's start, with the fix", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-deep-users-");
  after(() => removeDeep(fx));
  const made = spawnSync(
    process.execPath,
    ["-e", `const fs = require("fs");\n${deepFolder(4084)}\nconsole.log(deep);`],
    {
      cwd: fx.root,
      encoding: "utf8",
    },
  );
  const deep = made.stdout.trim();
  spawnSync("git", ["init", "-q", "node_modules/short"], { cwd: fx.root });
  spawnSync("mv", ["node_modules/short/.git", `${deep}/.git`], { cwd: fx.root });
  fx.git("update-index", "--add", "--cacheinfo", `160000,${fx.git("rev-parse", "HEAD").trim()},${deep}`);
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  try {
    const out = (await host.call("local_shell", { command: "node", args: ["-e", "1"] })) as {
      status: string;
      result?: { exit_code: number; stderr: string };
    };
    assert.equal(out.result?.exit_code, 126, JSON.stringify(out));
    assert.match(
      out.result.stderr,
      /ESANDBOX: latch cannot keep the config and hooks of `node_modules\/a\/c+.*` read-only in the sandbox: that git folder's path leaves fewer than 64 bytes below PATH_MAX \(4,096 bytes\) for the files in it\. Move that repository higher up or remove it/,
    );
  } finally {
    host.close();
  }
});

test("a repository of the user's below node_modules the call gitlinks is neutralized, and not said to be the call's (g59)", async () => {
  await requireSandbox();
  const fx = fixture("latch-sbx-users-gitlinked-");
  // The walk never enters node_modules, so latch cannot tell the user's repository there from one the
  // call made: once gitlinked, git enters it, so it is neutralized all the same, and said as it is.
  spawnSync("git", ["init", "-q", path.join(fx.root, "node_modules/pkg")]);
  spawnSync("git", [
    "-C",
    path.join(fx.root, "node_modules/pkg"),
    "config",
    "core.fsmonitor",
    `touch ${marker(fx)}; false`,
  ]);
  const undone = await modelRuns(
    fx,
    [
      `const cp = require("child_process");`,
      `const head = cp.execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();`,
      `cp.execFileSync("git", ["update-index", "--add", "--cacheinfo", "160000," + head + ",node_modules/pkg"]);`,
    ].join("\n"),
  );
  assert.deepEqual(
    undone.map((u) => [u.path, u.what.replace(/; the file as it was.*/, "")]),
    [
      [
        "node_modules/pkg/.git/config",
        "rewritten: config keys that run programs dropped (a repository below node_modules or site-packages, which latch had not looked at before the call)",
      ],
    ],
  );
  const git = userGitStatus(fx);
  assert.equal(git.ran, false, `the payload ran: ${git.out}`);
});
