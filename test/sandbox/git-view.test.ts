// Git in a repository that tracks quarantined files, contained and uncontained side by side. The box
// masks `.env`, `certs/server.pem` and `.ssh/` (the workspace's secrets); before src/sandbox/git-view.ts
// contained `git diff` failed (`cannot hash .env`) and `git status` reported ` M .env` that never
// happened. Two identical repositories (200 ordinary files, real edits, deletions, new files) get the
// same calls, one contained and one not: the answers must agree on every ordinary path, say nothing
// about the masked ones, and hold no byte of them; a diff through history says the content was
// withheld. Afterwards the disk, the index flags and the process table are checked.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import {
  decisions,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  type SandboxFixture,
} from "./sandbox-fixture.js";

const SECRETS: Record<string, string> = {
  ".env": "API_KEY=SECRET-DOTENV-gv28\n",
  "certs/server.pem": "-----BEGIN PRIVATE KEY-----\nSECRET-PEM-gv28\n-----END PRIVATE KEY-----\n",
  ".ssh/id_rsa": "SECRET-SSH-gv28\n",
};
/** The second commit's `.env`: history holds both. */
const ENV_V2 = "API_KEY=SECRET-DOTENV-V2-gv28\nMORE=SECRET-MORE-gv28\n";
const NEEDLES = ["SECRET-", "API_KEY", "PRIVATE KEY"];

type Out = { status: string; result?: Record<string, unknown> };

interface Side {
  fx: SandboxFixture;
  host: Host;
  contained: boolean;
}
const sides: Side[] = [];

function build(fx: SandboxFixture): void {
  for (let i = 0; i < 200; i++) fx.write(`src/m${Math.floor(i / 20)}/f${i}.txt`, `file ${i}\nline two\n`);
  for (const [rel, content] of Object.entries(SECRETS)) fx.write(rel, content);
  fx.write("run.sh", "#!/bin/sh\necho run\n", 0o755);
  fx.git("init", "-q");
  fx.git("config", "user.email", "t@example.com");
  fx.git("config", "user.name", "t");
  fx.git("add", "-A");
  fx.git("commit", "-q", "-m", "one");
  fx.write(".env", ENV_V2);
  fx.write("src/m0/f0.txt", "file 0 changed in two\n");
  fx.git("commit", "-q", "-am", "two");
  // Real edits, uncommitted: 20 changed, 2 deleted, 3 new, one made executable.
  for (let i = 5; i < 200; i += 10) fx.write(`src/m${Math.floor(i / 20)}/f${i}.txt`, `file ${i}\nedited\nline three\n`);
  rmSync(path.join(fx.root, "src/m1/f21.txt"));
  rmSync(path.join(fx.root, "src/m9/f199.txt"));
  for (const n of ["new1.txt", "src/new2.txt", "src/m3/new3.txt"]) fx.write(n, `new ${n}\n`);
  fx.git("update-index", "--chmod=+x", "src/m2/f40.txt");
  // The user's own index flags, which must survive the calls as they are.
  fx.git("update-index", "--assume-unchanged", "src/m4/f80.txt");
}

async function call(side: Side, command: string): Promise<string> {
  const before = decisions(side.host).length;
  const out = (await side.host.call("local_shell", { command })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, side.contained, JSON.stringify(out.result));
  assert.equal(decisions(side.host).length, before + 1, "the call's decision is logged");
  return `exit ${String(out.result!.exit_code)}\n${String(out.result!.stdout)}\n--stderr--\n${String(out.result!.stderr)}`;
}

/** The same command on both sides: contained output (checked for secrets), uncontained output. */
async function both(command: string): Promise<[string, string]> {
  const [a, b] = [await call(sides[0], command), await call(sides[1], command)];
  for (const n of NEEDLES) assert.ok(!a.includes(n), `contained \`${command}\` printed ${n}:\n${a}`);
  return [a, b];
}

describe("contained git agrees with uncontained git in a repository that tracks quarantined files", () => {
  before(async () => {
    await requireSandbox();
    for (const contained of [true, false]) {
      const fx = makeSandboxFixture(`latch-gitview-${contained ? "in" : "out"}-`);
      build(fx);
      const config = { toolsPolicies: { local_shell: { _containment: contained ? "required" : "off" } }, agents: {} };
      sides.push({ fx, host: await fx.host({ config }), contained });
    }
  });
  after(() => {
    for (const s of sides) s.fx.cleanup();
  });

  test("`git status --porcelain` lists the same ordinary changes and no change to a masked file", async () => {
    const [a, b] = await both("git status --porcelain");
    assert.equal(a, b);
    assert.match(a, / M src\/m0\/f5.txt/);
    assert.match(a, / D src\/m1\/f21.txt/);
    assert.match(a, /\?\? new1.txt/);
    for (const rel of Object.keys(SECRETS)) assert.ok(!a.includes(rel), `${rel} is reported:\n${a}`);
  });

  test("`git diff --stat` and `git diff` agree, exit 0, and never fail on a masked file", async () => {
    for (const cmd of ["git diff --stat", "git diff", "git diff --name-status HEAD", "git status"]) {
      const [a, b] = await both(cmd);
      assert.equal(a, b, cmd);
      assert.match(a, /^exit 0\n/, cmd);
      assert.doesNotMatch(a, /unsupported file type|cannot hash/, cmd);
    }
  });

  test("a diff through history that includes a quarantined file says it was withheld", async () => {
    const [a, b] = await both("git diff HEAD~1 HEAD");
    assert.match(b, /^-API_KEY=/m, "uncontained git shows the content's lines (the box must not)");
    assert.match(a, /diff --git a\/\.env b\/\.env/);
    assert.match(a, /latch: content withheld \(a quarantined path; blob [0-9a-f]{40}\)/);
    // The ordinary file's part of the same diff is exactly as uncontained.
    const part = (s: string) => s.slice(s.indexOf("diff --git a/src/m0/f0.txt"));
    assert.equal(part(a), part(b));
    const [logA] = await both("git log -p --format=%s");
    assert.match(logA, /content withheld/);
  });

  test("`git add -A` and `git commit -am` make the same tree as uncontained, masked files as committed", async () => {
    const [a, b] = await both("git add -A");
    assert.equal(a, b);
    await both("git commit -q -am three");
    const [treeA, treeB] = await both("git rev-parse HEAD^{tree}");
    assert.equal(treeA, treeB, "the same tree, byte for byte");
    const [statA, statB] = await both("git show --stat --format=%s HEAD");
    assert.equal(statA, statB);
    const [clean, cleanB] = await both("git status --porcelain");
    assert.equal(clean, cleanB);
    assert.equal(clean, "exit 0\n\n--stderr--\n");
  });

  test("the disk is as uncontained git left it: secrets, index flags, no mount point, no process", () => {
    const [inside, outside] = sides.map((s) => s.fx);
    for (const [rel, content] of Object.entries(SECRETS)) {
      const want = rel === ".env" ? ENV_V2 : content;
      assert.equal(readFileSync(path.join(inside.root, rel), "utf8"), want, rel);
    }
    assert.deepEqual(readdirSync(path.join(inside.root, ".ssh")), ["id_rsa"]);
    assert.deepEqual(
      readdirSync(path.join(inside.root, ".git/info")),
      readdirSync(path.join(outside.root, ".git/info")),
    );
    // `ls-files -v`: h = assume-unchanged; the masked paths carry no flag latch set, the user's is kept.
    const flags = (fx: SandboxFixture) => fx.git("ls-files", "-v");
    assert.equal(flags(inside), flags(outside));
    assert.match(flags(inside), /^h src\/m4\/f80.txt$/m);
    assert.match(flags(inside), /^H \.env$/m);
    // Uncontained git, after the box: nothing changed on the masked paths.
    const env = { ...process.env, HOME: inside.home, GIT_CONFIG_NOSYSTEM: "1" };
    assert.equal(execFileSync("git", ["status", "--porcelain"], { cwd: inside.root, env, encoding: "utf8" }), "");
    assert.deepEqual(markedProcesses(), []);
  });
});
