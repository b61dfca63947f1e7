// Workspace secrets, tried for real: the credential quarantine covers `.env`, `*.pem`, a `.ssh` folder
// inside the workspace too, and naming one is refused; a contained process that reaches them without
// naming them (`grep -r KEY .`, a node script that walks the tree, `tar czf x.tgz .`, a workspace
// script that cats them) reads nothing, because the sandbox masks every quarantined path it finds when
// the process starts (src/sandbox/secrets.ts). Each test checks the output for the secrets' bytes, the
// disk (the secrets unchanged, nothing left behind) and the policy log. A nested repository's
// `.git/config` and hooks stay read-only in workspace-write mode.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
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

/** Quarantined workspace paths and what they hold; each value appears nowhere else. */
const SECRET_FILES: Record<string, string> = {
  ".env": "KEY=SECRET-ROOT-ENV-hsbx\n",
  "services/api/.env": "KEY=SECRET-NESTED-ENV-hsbx\n",
  "services/api/.env.local": "KEY=SECRET-ENV-LOCAL-hsbx\n",
  "certs/my server.pem": "KEY SECRET-PEM-WITH-SPACE-hsbx\n",
  "deploy/.ssh/id_ed25519": "KEY SECRET-SSH-FOLDER-hsbx\n",
};
/** Outside the workspace, reached through a link with an ordinary name (`settings.txt`). */
const LINKED_SECRET = "SECRET-LINKED-FROM-OUTSIDE-hsbx";
const SECRET_BYTES = [...Object.values(SECRET_FILES).map((v) => v.trim().split(/[= ]/)[1]), LINKED_SECRET];

type Out = { status: string; reason?: string; result?: Record<string, unknown> };

let fx: SandboxFixture;
let host: Host;

function output(out: Out): string {
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true, JSON.stringify(out.result));
  return `${String(out.result!.stdout)}\n${String(out.result!.stderr)}`;
}

function assertNoSecret(text: string): void {
  for (const s of SECRET_BYTES) assert.ok(!text.includes(s), `${s} leaked: ${text}`);
}

/** The secrets are as they were, no empty mount point was left anywhere, no process of any run lives. */
function assertDiskUnchanged(): void {
  for (const [rel, content] of Object.entries(SECRET_FILES))
    assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), content, rel);
  assert.deepEqual(readdirSync(path.join(fx.root, "deploy/.ssh")), ["id_ed25519"]);
  assert.deepEqual(markedProcesses(), [], "no process of any run is left");
}

/** Runs `command` and checks that it is in the policy log, one new decision: allow, contained. */
async function call(command: string): Promise<Out> {
  const before = decisions(host).length;
  const out = (await host.call("local_shell", { command })) as Out;
  const log = decisions(host);
  assert.equal(log.length, before + 1, "the call's decision is logged");
  const d = log.at(-1)!;
  assert.equal(d.tool, "local_shell");
  assert.equal(d.final, "allow", JSON.stringify(d));
  assert.deepEqual(d.sandbox, { contained: true, mode: "workspace-write", network: false });
  return out;
}

describe("workspace secrets are masked from contained processes", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-secrets-");
    for (const [rel, content] of Object.entries(SECRET_FILES)) fx.write(rel, content);
    fx.write("notes.txt", "KEY=public-notes\n");
    fx.write(".env.example", "KEY=public-example\n");
    writeFileSync(path.join(fx.outside, ".env"), `KEY=${LINKED_SECRET}\n`);
    symlinkSync(path.join(fx.outside, ".env"), path.join(fx.root, "settings.txt"));
    host = await fx.host();
  });
  after(() => fx?.cleanup());

  test("naming a workspace secret is refused before anything runs", async () => {
    for (const command of ["cat .env", "cat services/api/.env", "head 'certs/my server.pem'", "ls deploy/.ssh"]) {
      const out = (await host.call("local_shell", { command })) as Out;
      assert.equal(out.status, "refused", command);
      assert.match(out.reason!, /credential path/);
      assert.equal(decisions(host).at(-1)!.final, "deny");
    }
  });

  test("`grep -r KEY .` prints the public lines and no secret", async () => {
    const text = output(await call("grep -r KEY ."));
    assert.match(text, /notes\.txt:KEY=public-notes/, `grep must have searched the tree: ${text}`);
    assert.match(text, /\.env\.example:KEY=public-example/, "`.env.example` is not quarantined");
    assertNoSecret(text);
    assertDiskUnchanged();
  });

  test("a node script that walks the tree and reads every file reads no secret", async () => {
    const script = [
      'const fs = require("fs"), p = require("path");',
      "const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {",
      "  const f = p.join(d, e.name);",
      "  if (e.isDirectory()) walk(f);",
      '  else { try { console.log(f, JSON.stringify(fs.readFileSync(f, "utf8"))) } catch (err) { console.log(f, err.code) } } } };',
      'walk("."); console.log("WALK-DONE");',
    ].join("\n");
    const command = `node -e '${script}'`;
    const text = output(await call(command));
    assert.match(text, /WALK-DONE/);
    assert.match(text, /notes\.txt "KEY=public-notes\\n"/, `the walk must have read ordinary files: ${text}`);
    assertNoSecret(text);
    assertDiskUnchanged();
  });

  test("`tar czf x.tgz .` archives no secret", async () => {
    output(await call("tar czf x.tgz ."));
    const archive = execFileSync("gzip", ["-dc", path.join(fx.root, "x.tgz")]).toString("latin1");
    assert.match(archive, /KEY=public-notes/, "the archive must hold the ordinary files");
    assertNoSecret(archive);
    assertDiskUnchanged();
  });

  test("a workspace script that cats and overwrites the secrets by name reads and changes nothing", async () => {
    const names = Object.keys(SECRET_FILES).map((n) => `'${n}'`);
    fx.write(
      "show.sh",
      ["cat " + names.join(" "), ...names.map((n) => `echo overwritten > ${n}`), "echo SCRIPT-DONE", ""].join("\n"),
    );
    const text = output(await call("sh show.sh"));
    assert.match(text, /SCRIPT-DONE/);
    assertNoSecret(text);
    assertDiskUnchanged();
  });

  test("a secret made by the call itself is the process's own: it reads it", async () => {
    // Found when the process starts, so a `.env` it writes later is not masked: it knows what it wrote.
    const command = `node -e 'const fs = require("fs"); fs.mkdirSync("made"); fs.writeFileSync("made/.env", "MINE"); console.log(fs.readFileSync("made/.env", "utf8"))'`;
    const text = output(await call(command));
    assert.match(text, /MINE/);
    assert.equal(readFileSync(path.join(fx.root, "made/.env"), "utf8"), "MINE");
    // The next process finds it and masks it like any other.
    const next = output(await call("grep -r MINE made"));
    assert.doesNotMatch(next, /made\/\.env:MINE/);
  });

  test("a CA bundle in a virtual environment's site-packages is a package's file, not a secret: it is read", async () => {
    // The walk does not enter site-packages (src/sandbox/not-walked.ts), as it does not node_modules:
    // masked, certifi's bundle left every HTTPS client in the box without its CAs.
    fx.write(".venv/lib/python3.12/site-packages/certifi/cacert.pem", "PUBLIC-CA-BUNDLE-hsbx\n");
    const text = output(await call("grep -r PUBLIC-CA-BUNDLE .venv"));
    assert.match(text, /certifi\/cacert\.pem:PUBLIC-CA-BUNDLE-hsbx/);
  });

  test("a nested repository's .git/config and hooks stay read-only in workspace-write mode", async () => {
    const sub = path.join(fx.root, "vendor/lib");
    mkdirSync(sub, { recursive: true });
    execFileSync("git", ["init", "-q"], { cwd: sub });
    const config = readFileSync(path.join(sub, ".git/config"), "utf8");
    const script = [
      'const fs = require("fs");',
      'for (const f of ["vendor/lib/.git/config", "vendor/lib/.git/hooks/post-checkout"]) {',
      '  try { fs.appendFileSync(f, "[core]\\n\\tfsmonitor = touch /var/tmp/x\\n"); console.log("BREACH", f) } catch (e) { console.log("refused", e.code) } }',
      'fs.writeFileSync("vendor/lib/ok.txt", "ok"); console.log("WROTE-WORKSPACE");',
    ].join("\n");
    const out = await call(`node -e '${script}'`);
    const text = output(out);
    assert.equal(out.result!.mode, "workspace-write");
    assert.match(text, /WROTE-WORKSPACE/, "the workspace itself is writable");
    assert.doesNotMatch(text, /BREACH/);
    assert.equal(readFileSync(path.join(sub, ".git/config"), "utf8"), config);
    assert.equal(existsSync(path.join(sub, ".git/hooks/post-checkout")), false);
  });

  test("a submodule's git folder under .git/modules keeps its config and hooks read-only", async () => {
    // As `git submodule add` leaves it: the workspace's .git/modules/<name> is the submodule's repository.
    const gitdir = path.join(fx.root, ".git/modules/libs/sub");
    mkdirSync(path.join(gitdir, "hooks"), { recursive: true });
    writeFileSync(path.join(fx.root, ".git/HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(gitdir, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(gitdir, "config"), "[core]\n");
    const script = [
      'const fs = require("fs"), g = ".git/modules/libs/sub/";',
      'for (const f of [g + "config", g + "hooks/post-checkout"]) {',
      '  try { fs.appendFileSync(f, "x"); console.log("BREACH", f) } catch (e) { console.log("refused", e.code) } }',
      'fs.writeFileSync(g + "ORIG_HEAD", "x"); console.log("WROTE-GITDIR");',
    ].join("\n");
    const text = output(await call(`node -e '${script}'`));
    assert.match(text, /WROTE-GITDIR/, "the rest of the submodule's git folder is writable, as the root's is");
    assert.doesNotMatch(text, /BREACH/);
    assert.equal(readFileSync(path.join(gitdir, "config"), "utf8"), "[core]\n");
    assert.equal(existsSync(path.join(gitdir, "hooks/post-checkout")), false);
  });
});
