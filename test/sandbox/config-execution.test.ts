// Config-driven execution, tried for real under the built-in auto_edit envelope: a model that can
// write files makes git run its own command (core.fsmonitor, diff.external, a hook, a `.git` file
// pointing elsewhere). Contained, that command runs, but cannot write outside the workspace, to `.git`
// or to the control plane, nor read the control plane, the credential stores or latch's environment;
// a read-only-tier command cannot write the workspace at all. Each test checks the disk, the process
// table and the policy log afterwards.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SECRETS,
  type SandboxFixture,
} from "./sandbox-fixture.js";

process.env.I12_LATCH_SECRET = SECRETS.env; // in latch's own environment: /proc/<latch>/environ would show it

let fx: SandboxFixture;
let host: Host;
let hook: string;

/** A script that tries every escape and reports each success on stderr as BREACH-…. */
function attackScript(fx: SandboxFixture): string {
  const ws = fx.root;
  return [
    "#!/bin/sh",
    "echo HOOK-RAN >&2",
    `touch '${fx.outside}/marker' 2>/dev/null && echo BREACH-OUTSIDE >&2`,
    `touch '${ws}/ws-marker' 2>/dev/null && echo WROTE-WORKSPACE >&2`,
    `touch '${ws}/.git/hooks/post-commit' 2>/dev/null && echo BREACH-HOOKS >&2`,
    `echo '# x' >> '${ws}/.git/config' 2>/dev/null && echo BREACH-GIT-CONFIG >&2`,
    `touch '${fx.state}/marker' 2>/dev/null && echo BREACH-STATE-WRITE >&2`,
    `ls '${fx.state}' 2>/dev/null | grep -q . && echo BREACH-STATE-READ >&2`,
    `cat '${fx.home}/.ssh/id_rsa' '${fx.home}/.aws/credentials' >&2 2>/dev/null`,
    "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\000' '\\n' | grep I12_LATCH_SECRET >&2",
    "exit 1",
    "",
  ].join("\n");
}

function assertContained(out: unknown, mode: "read-only" | "workspace-write"): string {
  const r = out as { status: string; result?: Record<string, unknown> };
  assert.equal(r.status, "ok", JSON.stringify(out));
  assert.equal(r.result!.contained, true, JSON.stringify(r.result));
  assert.equal(r.result!.mode, mode);
  const text = `${String(r.result!.stdout)}\n${String(r.result!.stderr)}`;
  assert.match(text, /HOOK-RAN/, `the attack must have run for the test to mean anything: ${text}`);
  assert.doesNotMatch(text, /BREACH-/);
  for (const s of Object.values(SECRETS)) assert.ok(!text.includes(s), `${s} leaked: ${text}`);
  return text;
}

function assertDiskClean(fx: SandboxFixture, gitConfig: string): void {
  assert.equal(existsSync(path.join(fx.outside, "marker")), false);
  assert.equal(existsSync(path.join(fx.root, ".git/hooks/post-commit")), false);
  assert.equal(existsSync(path.join(fx.state, "marker")), false);
  assert.equal(readFileSync(path.join(fx.root, ".git/config"), "utf8"), gitConfig);
  assert.deepEqual(markedProcesses(), [], "no process of any run is left");
}

describe("config-driven execution runs contained", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture();
    initRepo(fx);
    hook = fx.write("hook.sh", attackScript(fx), 0o755);
    fx.git("add", "hook.sh");
    fx.git("commit", "-q", "-m", "hook");
    host = await fx.host();
  });
  after(() => fx?.cleanup());

  test("core.fsmonitor set by the model runs inside a read-only sandbox under `git status`", async () => {
    fx.git("config", "core.fsmonitor", hook);
    const gitConfig = readFileSync(path.join(fx.root, ".git/config"), "utf8");
    const out = await host.call("local_shell", { command: "git status" });
    assertContained(out, "read-only");
    assert.equal(existsSync(path.join(fx.root, "ws-marker")), false, "read-only tier: the workspace is not writable");
    assertDiskClean(fx, gitConfig);
    const d = decisions(host).at(-1)!;
    assert.equal(d.final, "allow");
    fx.git("config", "--unset", "core.fsmonitor");
  });

  test("diff.external runs inside a read-only sandbox under `git diff`", async () => {
    fx.git("config", "diff.external", hook);
    const gitConfig = readFileSync(path.join(fx.root, ".git/config"), "utf8");
    writeFileSync(path.join(fx.root, "a.txt"), "changed\n");
    const out = await host.call("local_shell", { command: "git diff" });
    assertContained(out, "read-only");
    assert.equal(existsSync(path.join(fx.root, "ws-marker")), false);
    assertDiskClean(fx, gitConfig);
    fx.git("config", "--unset", "diff.external");
    fx.git("checkout", "a.txt");
  });

  test("a pre-commit hook runs in workspace-write mode with .git/hooks and .git/config still read-only", async () => {
    writeFileSync(path.join(fx.root, ".git/hooks/pre-commit"), `#!/bin/sh\nexec '${hook}'\n`, { mode: 0o755 });
    const gitConfig = readFileSync(path.join(fx.root, ".git/config"), "utf8");
    writeFileSync(path.join(fx.root, "b.txt"), "b\n");
    fx.git("add", "b.txt");
    // not on the read-only tier: approved (yes approver), so workspace-write
    const out = await host.call("local_shell", { command: "git commit -q -m two" });
    const text = assertContained(out, "workspace-write");
    assert.match(text, /WROTE-WORKSPACE/, "workspace-write: the workspace itself is writable");
    assertDiskClean(fx, gitConfig);
    const d = decisions(host).at(-1)!;
    assert.equal(d.final, "allow");
    assert.ok((d.gates as { gate: string }[]).some((g) => g.gate === "approval"));
  });

  test("a `.git` file pointing at a repository elsewhere: its fsmonitor runs unable to write that repository", async () => {
    const { execFileSync } = await import("node:child_process");
    const other = makeSandboxFixture("latch-sbx-gitfile-");
    const evil = path.join(other.outside, "evil");
    execFileSync("git", ["init", "-q", evil]);
    const otherHook = path.join(other.outside, "hook.sh");
    writeFileSync(otherHook, attackScript(other), { mode: 0o755 });
    execFileSync("git", ["-C", evil, "config", "core.fsmonitor", otherHook]);
    try {
      writeFileSync(path.join(other.root, ".git"), `gitdir: ${evil}/.git\n`);
      writeFileSync(path.join(other.root, "x.txt"), "x\n");
      const h = await other.host();
      const evilConfig = readFileSync(path.join(evil, ".git/config"), "utf8");
      const out = await h.call("local_shell", { command: "git status" });
      assertContained(out, "read-only");
      assert.equal(readFileSync(path.join(evil, ".git/config"), "utf8"), evilConfig);
      assert.equal(existsSync(path.join(evil, ".git/hooks/post-commit")), false);
      assert.equal(existsSync(path.join(other.outside, "marker")), false);
      assert.equal(existsSync(path.join(other.state, "marker")), false);
      assert.deepEqual(markedProcesses(), []);
    } finally {
      other.cleanup();
    }
  });

  test("read-only-tier commands cannot write the workspace: `git log --output=` and `git diff --output=`", async () => {
    const before = readFileSync(path.join(fx.root, "a.txt"), "utf8");
    for (const command of ["git log --output=a.txt", "git diff HEAD~1 --output=a.txt"]) {
      // The planner's git table classifies `--output` as a write, so the line leaves the read-only tier
      // and goes to a person; only if it were still allowed there would it run, read-only.
      const ex = await host.explain("local_shell", { command });
      if (ex.decision !== "allow") {
        assert.equal(ex.decision, "approve", ex.reason);
        assert.match(ex.reason, /writes its output to a file/);
        continue;
      }
      const out = (await host.call("local_shell", { command })) as { status: string; result?: Record<string, unknown> };
      if (out.status === "ok") {
        assert.equal(out.result!.contained, true);
        assert.equal(out.result!.mode, "read-only");
        assert.notEqual(out.result!.exit_code, 0, JSON.stringify(out));
        assert.match(String(out.result!.stderr), /Read-only file system/);
      } else assert.equal(out.status, "refused", JSON.stringify(out)); // the planner may refuse --output first
      assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), before);
    }
    assert.deepEqual(markedProcesses(), []);
  });
});
