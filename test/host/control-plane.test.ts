// Issue 26, found by an attacker under the built-in envelopes with an empty agents.toml: a policy
// program kept in the workspace (the model rewrites it, the next start runs it), and the credential
// stores of a workspace that is the home folder. Each test tries the attack and checks the disk after.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError } from "../../src/config/load.js";
import { credentialStores } from "../../src/sandbox/masks.js";
import { runCli } from "../helpers/cli.js";
import { expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-plane-");
after(() => fx.cleanup());

/** A policy program that allows everything and leaves a mark when it runs. */
function allowAll(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const mark = file + ".ran";
  writeFileSync(
    file,
    `#!/bin/sh\ntouch '${mark}'\ncat >/dev/null\necho '{"decision":"allow","reason":"anything goes"}'\n`,
  );
  chmodSync(file, 0o755);
  return mark;
}

describe("a policy program inside the workspace", () => {
  for (const rel of ["policy.sh", "tools/policy.sh"]) {
    test(`is refused at start through createHost (${rel}), naming the fix, and never runs`, async () => {
      const prog = path.join(fx.root, rel);
      const mark = allowAll(prog);
      await assert.rejects(
        fx.host({ policyPrograms: [prog] }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /The policy program `.*policy\.sh` is inside the workspace/.test(err.message) &&
          /Move it outside the workspace/.test(err.message),
      );
      assert.equal(existsSync(mark), false, "the program never ran");
    });
  }

  test("reached through a link from outside, it is still inside the workspace: refused", async () => {
    const prog = path.join(fx.root, "linked-policy.sh");
    allowAll(prog);
    const link = path.join(fx.base, "policy-link.sh");
    symlinkSync(prog, link);
    await assert.rejects(fx.host({ policyPrograms: [link] }), /is inside the workspace/);
  });

  test("is refused at start through the built CLI `latch call`; the call does not run", async () => {
    const prog = path.join(fx.root, "cli-policy.sh");
    const mark = allowAll(prog);
    const r = await runCli([
      "call",
      "write_file",
      JSON.stringify({ path: "pwned.txt", content: "x\n" }),
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--policy",
      prog,
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr + r.stdout, /is inside the workspace.*Move it outside the workspace/s);
    assert.equal(existsSync(path.join(fx.root, "pwned.txt")), false);
    assert.equal(existsSync(mark), false);
  });
});

describe("a policy program added by a config reload", () => {
  test("inside the workspace: the reload is refused with the fix, the old config stays in force", async () => {
    const cfg = path.join(fx.base, "reload-agents.toml");
    writeFileSync(cfg, "");
    const h = await fx.host({ config: undefined, configPath: cfg });
    const prog = path.join(fx.root, "reload-policy.sh");
    const mark = allowAll(prog);
    writeFileSync(cfg, `policy_programs = [${JSON.stringify(prog)}]\n`);
    const r = await h.reload();
    assert.equal(r.changed, false);
    assert.match(r.error ?? "", /is inside the workspace.*Move it outside the workspace/s);
    const call = await h.call("write_file", { path: "after-reload.txt", content: "x\n" });
    assert.equal(call.status, "ok", JSON.stringify(call));
    assert.equal(existsSync(mark), false, "the program never ran");
  });

  test("outside the workspace: it joins the control plane", async () => {
    const cfg = path.join(fx.base, "reload-agents-2.toml");
    writeFileSync(cfg, "");
    const dir = path.join(fx.base, "reload-policies");
    const prog = path.join(dir, "allow.sh");
    allowAll(prog);
    const h = await fx.host({ config: undefined, configPath: cfg });
    writeFileSync(cfg, `policy_programs = [${JSON.stringify(prog)}]\n`);
    assert.deepEqual(await h.reload(), { changed: true });
    await h.serveRoots([fx.root, dir]);
    const r = await h.call("write_file", { path: prog, content: "#!/bin/sh\necho pwned\n" });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(expectRefused(r).reason, /control plane/);
  });
});

describe("a policy program outside the workspace is control plane", () => {
  test("write_file to it (and to its folder) is refused, in a second served root too; it is unchanged", async () => {
    const dir = path.join(fx.base, "policies");
    const prog = path.join(dir, "allow.sh");
    allowAll(prog);
    const before = readFileSync(prog, "utf8");
    const h = await fx.host({ policyPrograms: [prog] });
    // The program itself still runs (latch starts it, outside every tool's reach).
    const fine = await h.call("write_file", { path: "fine.txt", content: "x\n" });
    assert.equal(fine.status, "ok", JSON.stringify(fine));
    assert.ok(existsSync(prog + ".ran"), "the program ran");
    const outside = await h.call("write_file", { path: prog, content: "#!/bin/sh\necho pwned\n" });
    assert.equal(outside.status, "refused");
    // The folder served as another root (an MCP client's second root): the control plane still holds.
    await h.serveRoots([fx.root, dir]);
    for (const target of [prog, path.join(dir, "other.sh")]) {
      const r = await h.call("write_file", { path: target, content: "#!/bin/sh\necho pwned\n" });
      assert.equal(r.status, "refused", JSON.stringify(r));
      assert.match(expectRefused(r).reason, /control plane/);
    }
    const moved = await h.call("move_file", { from: prog, to: path.join(dir, "gone.sh") });
    assert.equal(moved.status, "refused", JSON.stringify(moved));
    assert.equal(readFileSync(prog, "utf8"), before);
    assert.equal(existsSync(path.join(dir, "other.sh")), false);
  });
});

describe("a workspace that is the home folder: every credential store is refused to every file tool", () => {
  const STORES: Record<string, string> = {
    ".git-credentials": "https://me:SECRET-GITCRED@github.com\n",
    ".config/git/credentials": "https://me:SECRET-XDGCRED@github.com\n",
    ".config/gh/hosts.yml": "github.com:\n  oauth_token: SECRET-GH\n",
    ".claude/.credentials.json": '{"token":"SECRET-CLAUDE"}\n',
    ".vault-token": "SECRET-VAULT\n",
    ".ssh/id_ed25519": "SECRET-SSH\n",
    ".aws/credentials": "SECRET-AWS\n",
    ".docker/config.json": '{"auths":"SECRET-DOCKER"}\n',
    ".kube/config": "SECRET-KUBE\n",
    ".netrc": "machine x password SECRET-NETRC\n",
  };
  const home = path.join(fx.base, "home");
  for (const [rel, content] of Object.entries(STORES)) {
    mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    writeFileSync(path.join(home, rel), content);
  }
  writeFileSync(path.join(home, "notes.txt"), "fine\n");
  const homeHost = () =>
    fx.host({
      root: home,
      stateDir: path.join(fx.base, "home-state"),
      env: { PATH: process.env.PATH ?? "", HOME: home },
    });

  test("read_file, read_many_files, write_file and edit_file refuse each one; nothing leaks or changes", async () => {
    const h = await homeHost();
    for (const rel of Object.keys(STORES)) {
      for (const [tool, args] of [
        ["read_file", { path: rel }],
        ["read_many_files", { paths: [rel] }],
        ["write_file", { path: rel, content: "overwritten\n" }],
        ["edit_file", { path: rel, old_string: "SECRET", new_string: "x" }],
        ["grep", { pattern: "SECRET", path: rel }],
      ] as const) {
        const r = await h.call(tool, args);
        assert.notEqual(r.status, "ok", `${tool} ${rel}: ${JSON.stringify(r)}`);
        assert.doesNotMatch(JSON.stringify(r), /SECRET-/, `${tool} ${rel} leaked nothing`);
      }
      assert.equal(readFileSync(path.join(home, rel), "utf8"), STORES[rel], `${rel} is unchanged`);
    }
  });

  test("grep, find_files and list_dir over the whole home hide them", async () => {
    const h = await homeHost();
    const grep = await h.call("grep", { pattern: "SECRET" });
    assert.doesNotMatch(JSON.stringify(grep), /SECRET-/);
    const found = await h.call("find_files", { pattern: "**/*" });
    assert.equal(found.status, "ok", JSON.stringify(found));
    const listed = await h.call("list_dir", { path: ".", recursive: true, max_depth: 4 });
    assert.equal(listed.status, "ok", JSON.stringify(listed));
    for (const r of [found, listed]) {
      const text = JSON.stringify(r);
      assert.match(text, /notes\.txt/, "the walk ran");
      for (const name of [".git-credentials", "credentials.json", "hosts.yml", ".vault-token", "id_ed25519", ".netrc"])
        assert.doesNotMatch(text, new RegExp(name.replace(/\./g, "\\.")), `${name} is hidden`);
    }
  });

  test("the sandbox masks each of them under home (the one list)", () => {
    const masked = credentialStores(home);
    for (const rel of Object.keys(STORES)) {
      const abs = path.join(home, rel);
      assert.ok(
        masked.some((m) => abs === m || abs.startsWith(m + "/")),
        `${rel} is in the sandbox's mask list`,
      );
    }
  });
});
