// Issue 13, point 3, tried as an attacker would through the host, with no shell policy (only the
// built-in envelope): a shell or run_tool argument that is or holds latch's control plane, names a
// quarantined file (also as git's REV:PATH), or leads outside the root is refused before anything
// runs. Each test checks the disk and the policy log afterwards.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Approver } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { cutLongInputs } from "../../src/host/short.js";
import { makeFixture } from "../helpers/fixture.js";
import { shq } from "../helpers/quote.js";

const fx = makeFixture("latch-argattack-");
after(() => fx.cleanup());
const configPath = path.join(fx.base, "agents.toml");
const outside = path.join(fx.base, "outside");

/** An approver that says yes: a refusal seen here comes from latch's own checks, not from a person. */
const yes: Approver = { name: "yes", request: async () => ({ approved: true, by: "test" }) };

let host: Host;
let inner: Host; // a host whose state dir lies inside its workspace (a workspace that is the home folder)
const innerRoot = path.join(fx.base, "home");
const innerState = path.join(innerRoot, ".local", "state", "latch");

before(async () => {
  fx.write({ "a.txt": "a\n", ".env": "TOKEN=secret-token\n", "src/x.ts": "x\n" });
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), "outside-secret\n");
  writeFileSync(configPath, `[tools_policies.catalog]\n_tools = "cat,git,ls"\n`);
  const git = (...a: string[]) => execFileSync("git", a, { cwd: fx.root, stdio: "ignore" });
  git("init", "-q");
  git("-c", "user.email=a@b", "-c", "user.name=a", "add", "-f", "a.txt", ".env");
  git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x");
  host = await fx.host({ configPath, config: undefined, envelope: "ask_always", approver: yes });
  mkdirSync(innerState, { recursive: true });
  inner = await fx.host({ root: innerRoot, stateDir: innerState, configPath, config: undefined, approver: yes });
});

type Out = { status: string; reason?: string; result?: { stdout?: string; stderr?: string; exit_code?: number } };

async function call(h: Host, tool: string, args: unknown): Promise<Out> {
  return (await h.call(tool, args)) as Out;
}

function lastDecision(h: Host): Record<string, unknown> {
  const lines = readFileSync(h.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const records = lines.map((l) => JSON.parse(l).record).filter((r) => r.type === "effect_decision");
  return records[records.length - 1];
}

function assertRefused(h: Host, out: Out, reason: RegExp): void {
  assert.equal(out.status, "refused", JSON.stringify(out));
  assert.match(out.reason ?? "", reason);
  const d = lastDecision(h);
  assert.equal(d.final, "deny", JSON.stringify(d));
  // The log keeps the whole reason; the result quotes a long path cut to its ends (a clone or TMPDIR
  // ~280 characters deep makes these paths longer than short.ts's 300).
  assert.equal(cutLongInputs(String(d.reason)), out.reason);
}

describe("arguments checked by what they contain, with no shell policy", () => {
  test("`git diff --no-index <parent of the state dir> x` is refused: it would print the policy logs", async () => {
    for (const h of [host, inner]) {
      const parent = path.dirname(h === host ? fx.state : innerState);
      const out = await call(h, "local_shell", { command: `git diff --no-index ${shq(parent)} a.txt` });
      assertRefused(h, out, /control plane|outside the workspace/);
    }
    // Inside its own workspace, `.`, `.local` and `.local/state` all hold the state dir.
    for (const p of [".", ".local", ".local/state", innerRoot]) {
      const out = await call(inner, "local_shell", { command: `git diff --no-index ${shq(p)} x` });
      assertRefused(inner, out, /holds latch's own control plane/);
    }
    const ok = await call(inner, "local_shell", { command: "ls -a .local" });
    assertRefused(inner, ok, /holds latch's own control plane/);
  });

  test("in a workspace that is the home folder, the credential stores the sandbox hides are refused as arguments", async () => {
    const home = path.join(fx.base, "homews");
    const secrets = { ".config/gh/hosts.yml": "gh-token-secret\n", ".azure/accessTokens.json": "azure-secret\n" };
    for (const [rel, body] of Object.entries(secrets)) {
      mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
      writeFileSync(path.join(home, rel), body);
    }
    writeFileSync(path.join(home, "notes.txt"), "fine\n");
    const h = await fx.host({
      root: home,
      stateDir: path.join(fx.base, "homews-state"),
      configPath,
      config: undefined,
      approver: yes,
      env: { PATH: process.env.PATH ?? "", HOME: home },
    });
    for (const command of [
      "cat .config/gh/hosts.yml",
      "cp .azure/accessTokens.json leaked.txt",
      "ls .azure",
      "ls .config",
      `cat ${shq(path.join(home, ".config/gh/hosts.yml"))}`,
    ]) {
      const out = await call(h, "local_shell", { command });
      // A store named itself is under the quarantine; a folder that holds one is a credential store's
      // holder; `.config` also holds the user's skill folder, latch's control plane.
      assertRefused(h, out, /credential store|credential path|control plane/);
      assert.doesNotMatch(JSON.stringify(out), /secret/);
    }
    const rt = await call(h, "run_tool", { tool_id: "cat", arguments: [".config/gh/hosts.yml"] });
    assertRefused(h, rt, /credential store|credential path/);
    assert.equal(existsSync(path.join(home, "leaked.txt")), false);
    const fine = await call(h, "local_shell", { command: "cat notes.txt" });
    assert.equal(fine.status, "ok", JSON.stringify(fine));
  });

  test("`git show HEAD:.env` is refused: REV:PATH forms are checked as paths", async () => {
    for (const rev of ["HEAD:.env", ":.env", ":0:.env", "HEAD:src/../.env", "HEAD~0:./.env"]) {
      const out = await call(host, "local_shell", { command: `git show ${rev}` });
      assertRefused(host, out, /credential path/);
      const rt = await call(host, "run_tool", { tool_id: "git", arguments: ["show", rev] });
      assertRefused(host, rt, /credential path/);
    }
    const fine = await call(host, "local_shell", { command: "git show HEAD:a.txt" });
    assert.equal(fine.status, "ok", JSON.stringify(fine));
    assert.doesNotMatch(JSON.stringify(fine), /secret-token/);
  });

  test("`run_tool cat <policy log>` is refused, and so is every control-plane path through run_tool", async () => {
    for (const target of [host.policyLog, fx.state, path.dirname(fx.state), configPath]) {
      const out = await call(host, "run_tool", { tool_id: "cat", arguments: [target] });
      assertRefused(host, out, /control plane|outside the workspace/);
      assert.doesNotMatch(JSON.stringify(out), /effect_decision/);
    }
  });

  test("`git … --output=<agents.toml>` is refused and leaves latch's config as it was", async () => {
    const before = readFileSync(configPath, "utf8");
    for (const args of [
      ["log", `--output=${configPath}`],
      ["diff", "--output", configPath],
      ["log", `--outp=${configPath}`],
      ["format-patch", "-o", path.dirname(configPath), "HEAD~0"],
    ]) {
      const out = await call(host, "local_shell", { command: "git", args });
      assertRefused(host, out, /control plane|outside the workspace/);
      const rt = await call(host, "run_tool", { tool_id: "git", arguments: args });
      assertRefused(host, rt, /control plane|outside the workspace/);
    }
    assert.equal(readFileSync(configPath, "utf8"), before);
    assert.deepEqual(
      readdirSync(path.dirname(configPath)).filter((f) => f.endsWith(".patch")),
      [],
    );
  });

  test("paths outside the root are refused in every mode: /proc, /sys, /dev/fd, /etc, ..", async () => {
    for (const command of [
      "cat /proc/self/environ",
      "ls /sys",
      "cat /dev/fd/0",
      "cat /etc/hostname",
      "cat ../outside/secret.txt",
      `cat ${outside}/secret.txt`,
      "tar -cvf/tmp/x.tar src",
    ]) {
      const out = await call(host, "local_shell", { command });
      assertRefused(host, out, /outside the workspace/);
    }
    assert.equal(existsSync("/tmp/x.tar"), false);
    const rt = await call(host, "run_tool", { tool_id: "cat", arguments: ["/proc/self/environ"] });
    assertRefused(host, rt, /outside the workspace/);
    const devnull = await call(host, "local_shell", { command: "git diff --no-index a.txt /dev/null" });
    assert.equal(devnull.status, "ok", JSON.stringify(devnull));
  });

  test("a symlink made by an earlier step is seen right before the next step runs", async () => {
    // The archive holds a link `lnk -> <outside>`; at plan time lnk does not exist, so `cat lnk/…`
    // is inside the root. The step is planned again before it runs, and refused then.
    const work = path.join(fx.base, "mk");
    mkdirSync(work);
    symlinkSync(outside, path.join(work, "lnk"));
    execFileSync("tar", ["-cf", path.join(fx.root, "links.tar"), "-C", work, "lnk"]);
    const out = await call(host, "local_shell", { command: "tar -xf links.tar && cat lnk/secret.txt" });
    assert.equal(out.status, "ok", JSON.stringify(out));
    const r = out.result as { stdout: string; stderr: string; exit_code: number; refused?: { step: number } };
    assert.equal(r.refused?.step, 1, JSON.stringify(r));
    assert.doesNotMatch(r.stdout, /outside-secret/);
    assert.match(r.stderr, /refused before it ran.*outside the workspace/);
    assert.equal(r.exit_code, 126);
    // The next call sees the link at plan time.
    const again = await call(host, "local_shell", { command: "cat lnk/secret.txt" });
    assertRefused(host, again, /outside the workspace/);
  });

  test("`rm -rf <root>` and `find . -delete` are refused in every envelope", async () => {
    for (const command of [`rm -rf ${shq(fx.root)}`, "find . -delete", `find ${shq(fx.root)} -depth -delete`]) {
      const out = await call(host, "local_shell", { command });
      assertRefused(host, out, /would delete the whole workspace/);
    }
    assert.equal(existsSync(path.join(fx.root, "a.txt")), true);
  });
});
