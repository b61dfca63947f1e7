// Approved writes of `.git/config`, tried for real (real git, real bubblewrap): a person's yes to
// `git remote add` or `git config user.name` lands in the repository's config, the request names each
// key and value, and the log records them; a key that makes git run a program is refused even when a
// person would say yes, unless the envelope opens it; the file is writable for the approved step only,
// and anything else the line changes (a hook, another key) is undone. Each test checks the disk and the log.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import { checkConfig, configBaseline } from "../../src/sandbox/config-guard.js";
import { ControlGuard } from "../../src/sandbox/guard.js";
import { decisions, initRepo, makeSandboxFixture, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

type Out = { status: string; reason?: string; result?: Record<string, unknown> };

let fx: SandboxFixture;

/** Says yes, and keeps what each request showed the person. */
function recordingApprover(asked: ApprovalRequest[]): Approver {
  return {
    name: "recording yes",
    async request(req) {
      asked.push(req);
      return { approved: true, by: "test" };
    },
  };
}

const getConfig = (key: string): string | undefined => {
  try {
    return fx.git("config", "--get", key).trim();
  } catch {
    return undefined; // git exits 1 for a key that is not set
  }
};

describe("approved .git/config writes", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-sbx-gitcfg-");
    initRepo(fx);
  });
  after(() => fx?.cleanup());

  test("an approved `git remote add origin https://example.test/x.git` lands in .git/config, asked and logged with its keys", async () => {
    const asked: ApprovalRequest[] = [];
    const host = await fx.host({ approver: recordingApprover(asked) });
    const out = (await host.call("local_shell", {
      command: "git remote add origin https://example.test/x.git",
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.contained, true);
    assert.equal(out.result!.exit_code, 0, String(out.result!.stderr));
    assert.equal(getConfig("remote.origin.url"), "https://example.test/x.git");
    assert.equal(getConfig("remote.origin.fetch"), "+refs/heads/*:refs/remotes/origin/*");
    assert.equal(asked.length, 1, "a person was asked");
    assert.match(asked[0].reason, /writes \.git\/config: set remote\.origin\.url = "https:\/\/example\.test\/x\.git"/);
    const d = decisions(host).at(-1)! as { final: string; sandbox: { git_config?: string[] } };
    assert.equal(d.final, "allow");
    assert.deepEqual(d.sandbox.git_config, [
      'set remote.origin.url = "https://example.test/x.git"',
      'add remote.origin.fetch = "+refs/heads/*:refs/remotes/origin/*"',
    ]);
    assert.equal(out.result!.undone, undefined, "nothing of the approved change was undone");
    host.close();
  });

  test("a config write the person refuses leaves .git/config as it was", async () => {
    const host = await fx.host({
      approver: { name: "no", request: async () => ({ approved: false, by: "test" }) },
    });
    const out = (await host.call("local_shell", { command: "git config user.name refused-name" })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.equal(getConfig("user.name"), "t");
    host.close();
  });

  test("`git config core.fsmonitor x`, approved, is still refused with the reason, and nothing is written", async () => {
    const asked: ApprovalRequest[] = [];
    const host = await fx.host({ approver: recordingApprover(asked) });
    for (const command of [
      "git config core.fsmonitor x",
      "git config core.pager sh",
      "git config alias.st '!sh -c id'",
      "git config --rename-section user core",
    ]) {
      const out = (await host.call("local_shell", { command })) as Out;
      assert.equal(out.status, "refused", `${command}: ${JSON.stringify(out)}`);
      assert.match(String(out.reason), /runs as a program: refused even with approval.*allow_git_exec_config/);
    }
    assert.equal(asked.length, 0, "no person is asked for what no answer can open");
    assert.equal(getConfig("core.fsmonitor"), undefined);
    assert.equal(getConfig("alias.st"), undefined);
    assert.equal(getConfig("user.name"), "t");
    assert.match(String(decisions(host).at(-1)!.reason), /allow_git_exec_config/);
    host.close();
  });

  test("with shell.allow_git_exec_config = true, an approved `git config core.fsmonitor x` lands", async () => {
    const asked: ApprovalRequest[] = [];
    const host = await fx.host({
      approver: recordingApprover(asked),
      envelope: "open",
      config: {
        toolsPolicies: {},
        agents: {},
        envelopes: { open: { extends: "default", shell: { allow_git_exec_config: true } } },
      },
    });
    const out = (await host.call("local_shell", { command: "git config core.fsmonitor x" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.exit_code, 0, String(out.result!.stderr));
    assert.equal(asked.length, 1);
    assert.match(asked[0].reason, /set core\.fsmonitor = "x"/);
    assert.equal(getConfig("core.fsmonitor"), "x");
    fx.git("config", "--unset", "core.fsmonitor");
    host.close();
  });

  test("an approved `git config user.name x && sh hook.sh` keeps user.name and undoes the hook the script made", async () => {
    // No hooks folder to begin with: the script can make one (an existing one is read-only in the box).
    rmSync(path.join(fx.root, ".git/hooks"), { recursive: true, force: true });
    fx.write(
      "hook.sh",
      "mkdir -p .git/hooks && printf '#!/bin/sh\\necho PWNED\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit\n",
    );
    const host = await fx.host();
    const out = (await host.call("local_shell", {
      command: "git config user.name approved-name && sh hook.sh",
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.exit_code, 0, String(out.result!.stderr));
    assert.equal(getConfig("user.name"), "approved-name", "the approved change is kept");
    assert.equal(existsSync(path.join(fx.root, ".git/hooks/pre-commit")), false, "the hook is gone");
    assert.match(JSON.stringify(out.result!.undone), /\.git\/hooks/);
    const log = decisions(host).at(-1)! as { sandbox: { git_config?: string[] } };
    assert.deepEqual(log.sandbox.git_config, ['set user.name = "approved-name"']);
    host.close();
  });

  test("only the approved step may write .git/config: a script in the same line that adds core.fsmonitor fails", async () => {
    fx.write("edit.sh", "printf '[core]\\n\\tfsmonitor = touch /tmp/PWNED\\n' >> .git/config\n");
    const host = await fx.host();
    const out = (await host.call("local_shell", { command: "git config user.name second && sh edit.sh" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.notEqual(out.result!.exit_code, 0, "the script's write was refused");
    assert.match(String(out.result!.stderr), /Read-only file system|Permission denied/);
    assert.equal(getConfig("user.name"), "second");
    assert.equal(getConfig("core.fsmonitor"), undefined);
    host.close();
  });
});

test("the guard keeps the approved keys and puts back any other change to .git/config", () => {
  fx = makeSandboxFixture("latch-sbx-gitcfg-guard-");
  try {
    initRepo(fx);
    const guard = ControlGuard.start(fx.root, ["user.name", "remote.origin."]);
    // What a process with the file writable could do beyond its approval: a key that runs a program.
    fx.git("config", "user.name", "kept");
    fx.git("remote", "add", "origin", "https://example.test/r.git");
    fx.git("config", "core.fsmonitor", "touch /tmp/PWNED");
    fx.git("config", "user.email", "changed@example.com");
    const undone = guard.check();
    assert.equal(undone.length, 1, JSON.stringify(undone));
    assert.match(undone[0].what, /restored: keys beyond the approved change \(core\.fsmonitor, user\.email\)/);
    assert.equal(getConfig("core.fsmonitor"), undefined);
    assert.equal(getConfig("user.email"), "t@example.com");
    assert.equal(getConfig("user.name"), "kept");
    assert.equal(getConfig("remote.origin.url"), "https://example.test/r.git");
    guard.end();
    // Only approved keys changed: nothing to undo.
    const again = ControlGuard.start(fx.root, ["user.name"]);
    fx.git("config", "user.name", "kept again");
    assert.deepEqual(again.check(), []);
    again.end();
    assert.equal(getConfig("user.name"), "kept again");
  } finally {
    fx.cleanup();
  }
});

test("attack: .git swapped for a link to an outside folder during the call: the config guard writes nothing there", () => {
  fx = makeSandboxFixture("latch-sbx-gitcfg-swap-");
  try {
    initRepo(fx);
    const baseline = configBaseline(fx.root, ["user.name"]);
    const outside = path.join(fx.base, "outside-git");
    mkdirSync(outside);
    const planted = "[core]\n\tfsmonitor = touch /tmp/PWNED\n";
    writeFileSync(path.join(outside, "config"), planted);
    renameSync(path.join(fx.root, ".git"), path.join(fx.root, ".git-real"));
    symlinkSync(outside, path.join(fx.root, ".git"));
    const undone = checkConfig(baseline, (p) => path.relative(fx.root, p));
    assert.equal(undone.length, 1, JSON.stringify(undone));
    assert.match(undone[0].what, /NOT undone .*\.git is no longer the folder it was/);
    assert.equal(readFileSync(path.join(outside, "config"), "utf8"), planted, "the outside file is as it was");
    assert.deepEqual(readdirSync(outside), ["config"], "no restore file was made outside");
  } finally {
    fx.cleanup();
  }
});
