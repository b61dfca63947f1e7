// Rules that cover the whole call (issue 26): always_allow matches only when every command and every
// path of the call matches it, always_deny and ask_always when any does; a write the rules allow to a
// file other programs run later asks. Through the host: the real planner, the real envelope, the disk.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { parseConfig } from "../../src/config/load.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

const config = parseConfig(
  `
[envelopes.touchy]
extends = "default"
[[envelopes.touchy.always_allow]]
tool = "local_shell"
when_command = "touch"
[envelopes.touchy.shell]
ask_always = ["rm"]

[envelopes.scratchy]
extends = "default"
[[envelopes.scratchy.always_allow]]
tool = "apply_patch"
when_path = "scratch/**"

[envelopes.no_touch]
extends = "auto_edit"
[[envelopes.no_touch.always_deny]]
tool = "local_shell"
when_command = "touch"
`,
  path.join(fx.base, "agents.toml"),
);

const patch = (...files: string[]) =>
  ["*** Begin Patch", ...files.flatMap((f) => [`*** Add File: ${f}`, "+new"]), "*** End Patch"].join("\n");

describe("always_allow covers the whole call", () => {
  test("`touch a && rm -rf b` under always_allow for touch asks for the rm; nothing runs unasked", async () => {
    fx.write({ "b/keep.txt": "keep\n" });
    const h = await fx.host({ config, envelope: "touchy" });
    const ex = await h.explain("local_shell", { command: "touch a && rm -rf b" });
    assert.equal(ex.decision, "approve", ex.reason);
    assert.match(ex.reason, /shell\.ask_always "rm" matches `rm -rf b`/);
    // No approver: the approval is a deny, and neither command ran.
    const r = await h.call("local_shell", { command: "touch a && rm -rf b" });
    assert.equal(r.status, "refused");
    assert.ok(existsSync(path.join(fx.root, "b/keep.txt")), "b is still there");
    assert.ok(!existsSync(path.join(fx.root, "a")), "the touch did not run either");
    // A call that is all touch is still allowed by the rule.
    const only = await h.explain("local_shell", { command: "touch a && touch c" });
    assert.equal(only.decision, "allow", only.reason);
    assert.match(only.reason, /always_allow \(tool "local_shell", when_command "touch"/);
    const log = readFileSync(h.policyLog, "utf8");
    assert.match(log, /shell\.ask_always/, "the refused call's decision is on the policy log");
  });

  test("a patch over scratch/x and src/y under always_allow for scratch/** asks; one over scratch alone is allowed", async () => {
    const h = await fx.host({ config, envelope: "scratchy" });
    const both = await h.explain("apply_patch", { patch: patch("scratch/x.txt", "src/y.txt") });
    assert.equal(both.decision, "approve", both.reason);
    assert.doesNotMatch(both.reason, /always_allow/);
    const r = await h.call("apply_patch", { patch: patch("scratch/x.txt", "src/y.txt") });
    assert.equal(r.status, "refused");
    assert.ok(!existsSync(path.join(fx.root, "src/y.txt")) && !existsSync(path.join(fx.root, "scratch/x.txt")));
    const one = await h.explain("apply_patch", { patch: patch("scratch/x.txt", "scratch/z.txt") });
    assert.equal(one.decision, "allow", one.reason);
    assert.match(one.reason, /always_allow \(tool "apply_patch", when_path "scratch\/\*\*"/);
  });

  test("always_deny still matches when any command of the call does", async () => {
    const h = await fx.host({ config, envelope: "no_touch" });
    const ex = await h.explain("local_shell", { command: "ls && touch z" });
    assert.equal(ex.decision, "deny", ex.reason);
    assert.match(ex.reason, /always_deny/);
  });
});

describe("files other programs run later", () => {
  for (const rel of [
    ".vscode/tasks.json",
    ".envrc",
    ".mcp.json",
    ".husky/pre-commit",
    ".devcontainer/devcontainer.json",
  ])
    test(`write_file to ${rel} asks under auto_edit, with the reason; nothing is written unasked`, async () => {
      const h = await fx.host({ envelope: "auto_edit" });
      const ex = await h.explain("write_file", { path: rel, content: "echo pwned\n" });
      assert.equal(ex.decision, "approve", ex.reason);
      assert.match(ex.reason, new RegExp(`a file other programs run later: \`${rel.replace(/\./g, "\\.")}\``));
      const r = await h.call("write_file", { path: rel, content: "echo pwned\n" });
      assert.equal(r.status, "refused");
      assert.ok(!existsSync(path.join(fx.root, rel)), `${rel} was not written`);
    });

  test("an approved write there goes through; an ordinary file is still written unasked", async () => {
    const h = await fx.host({
      envelope: "auto_edit",
      approver: { name: "test", request: async () => ({ approved: true, by: "the test" }) },
    });
    const r = await h.call("write_file", { path: ".envrc", content: "export A=1\n" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(readFileSync(path.join(fx.root, ".envrc"), "utf8"), "export A=1\n");
    const plain = await h.explain("write_file", { path: "notes.txt", content: "x\n" });
    assert.equal(plain.decision, "allow", plain.reason);
  });

  test("a hooks folder the repository's config names (core.hooksPath) is one too", async () => {
    // Review g5: with `core.hooksPath = .githooks`, a file tool rewrote `.githooks/pre-commit` unasked
    // and the user's next commit ran it.
    const own = makeFixture();
    try {
      execFileSync("git", ["init", "-q", own.root]);
      execFileSync("git", ["-C", own.root, "config", "core.hooksPath", ".githooks"]);
      const h = await own.host({ envelope: "auto_edit" });
      const ex = await h.explain("write_file", { path: ".githooks/pre-commit", content: "echo pwned\n" });
      assert.equal(ex.decision, "approve", ex.reason);
      assert.match(ex.reason, /run later: `\.githooks\/pre-commit` \(core\.hooksPath or include\.path/);
      const r = await h.call("write_file", { path: ".githooks/pre-commit", content: "echo pwned\n" });
      assert.equal(r.status, "refused");
      assert.ok(!existsSync(path.join(own.root, ".githooks/pre-commit")));
      const plain = await h.explain("write_file", { path: "githooks.md", content: "x\n" });
      assert.equal(plain.decision, "allow", plain.reason);
    } finally {
      own.cleanup();
    }
  });

  test("so are the files the config includes from the workspace, there or not, and a hooksPath they set", async () => {
    // Review g7: file tools wrote core.fsmonitor into an included `tools/gitconfig`, made a missing
    // `.gitconfig.local` it names, and rewrote the hooks a hooksPath set in the include names: unasked.
    const own = makeFixture();
    try {
      execFileSync("git", ["init", "-q", own.root]);
      own.write({ "tools/gitconfig": "[core]\n\thooksPath = .githooks\n" });
      execFileSync("git", ["-C", own.root, "config", "include.path", "../tools/gitconfig"]);
      execFileSync("git", ["-C", own.root, "config", "--add", "include.path", "../.gitconfig.local"]);
      const h = await own.host({ envelope: "auto_edit" });
      for (const rel of ["tools/gitconfig", ".gitconfig.local", ".githooks/pre-commit"]) {
        const ex = await h.explain("write_file", { path: rel, content: "[core]\n\tfsmonitor = x\n" });
        assert.equal(ex.decision, "approve", `${rel}: ${ex.reason}`);
      }
      assert.equal((await h.explain("write_file", { path: "tools/other", content: "x\n" })).decision, "allow");
      // Read again when the config changes (kept by each file's stat between writes).
      execFileSync("git", ["-C", own.root, "config", "--unset-all", "include.path"]);
      assert.equal((await h.explain("write_file", { path: "tools/gitconfig", content: "x\n" })).decision, "allow");
    } finally {
      own.cleanup();
    }
  });

  test("every built-in envelope asks or denies, never allows, such a write", async () => {
    for (const name of ["read_only", "default", "auto_edit", "strict", "ask_always"]) {
      const h = await fx.host({ envelope: name });
      const ex = await h.explain("edit_file", { path: ".vscode/settings.json", old_string: "a", new_string: "b" });
      assert.notEqual(ex.decision, "allow", `${name}: ${ex.reason}`);
    }
  });
});
