// A folder the sandbox's walk cannot look into (EACCES) held secrets it never saw, so none was masked:
// and the contained process, the same user as latch, owns the folder and can open it again. Found by
// review h1, tried for real as an ordinary user (root reads every folder, so these run latch as nobody,
// test/helpers/unprivileged.ts): `chmod 311 .` (search, no read) or `chmod 600 dir` (read, no
// search) in one call, the secrets read by name, or after `chmod 755`, in the next. Each such folder
// is now masked whole (a read-only tmpfs); the root itself unreadable stops every process, with the fix.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { before, describe, test, type TestContext } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { stressCount } from "../helpers/stress.js";
import { NOBODY, unprivileged } from "../helpers/unprivileged.js";
import { requireSandbox } from "./sandbox-fixture.js";

const SECRETS: Record<string, string> = {
  "t1/services/api/.env": "KEY=UNREADABLE-A-u58\n",
  "t2/services/.env": "KEY=UNREADABLE-B-u58\n",
  "t3/cfg/.env.local": "KEY=UNREADABLE-C-u58\n",
  "t4/services/.env": "KEY=UNREADABLE-D-u58\n",
  "t6/.env": "KEY=UNREADABLE-E-u58\n",
};
/** Readers against the mode flipper (review h2 leaked in 5 of 30 calls before the fix). */
/** The user's `.git` file in t9/sub. */
const GITFILE = "gitdir: ../../t8/.git\n";
const HOOK = "#!/bin/sh\necho users-own\n";
/** The model's script: `python3 sdir.py INDEX TREE NAME` adds NAME as a sparse directory entry (mode 040000) naming TREE. */
const SPARSE_ENTRY = [
  "import struct, sys, hashlib",
  "path, tree, name = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3].encode()",
  "b = open(path, 'rb').read()",
  "n = struct.unpack('>I', b[8:12])[0]",
  "at, ents = 12, []",
  "for _ in range(n):",
  "    fl = struct.unpack('>H', b[at+60:at+62])[0]",
  "    sz = (62 + (2 if fl & 0x4000 else 0) + (fl & 0xfff) + 8) & ~7",
  "    ents.append(b[at:at+sz]); at += sz",
  "e = struct.pack('>10I', 0, 0, 0, 0, 0, 0, 0o040000, 0, 0, 0) + tree + struct.pack('>HH', 0x4000 | len(name), 0x4000) + name",
  "ents.append(e + b'\\0' * (8 - len(e) % 8))",
  "out = b'DIRC' + struct.pack('>II', 3, len(ents)) + b''.join(ents) + b'sdir' + struct.pack('>I', 0)",
  "open(path, 'wb').write(out + hashlib.sha1(out).digest())",
  "",
].join("\n");
const CHMOD_RACES = stressCount(40, 400, "LATCH_CHMOD_RACES");
/**
 * How many times each contained reader or writer tries the file against the mode flipper within its
 * one call. A try lands while the flipped folder is open in about 4 of 10 tries (measured as nobody
 * against the same loop, 2026-12-08): a call whose box lacks the mask leaks within its first few, and
 * 200 leave a chance of missing it below 1e-40. 2000 tries were ~25% of each call (and of the
 * flippers' spinning beside it): in a box they take 60-300 ms, the call around them ~0.4-1 s.
 */
const TRIES = 200;
const VALUES = Object.values(SECRETS).map((v) => v.trim().split("=")[1]);
/** A path given to the box's script as hex, so that no argument names a secret (the planner would refuse it). */
const hex = (s: string) => Buffer.from(s).toString("hex");

let ws: string;
let state: string;
let home: string;
/**
 * The PATH latch runs with: the system's, and a folder nobody may not even stat (its parent is root's,
 * 0700), as a PATH inherited from root holds `/root/.cargo/bin`: every shell call failed with EACCES.
 */
let PATH: string;
/** Where and how every latch of this file runs. */
const hostFlags = () => ["--root", ws, "--state-dir", state, "--envelope", "auto_edit"];

function chownTree(dir: string): void {
  chownSync(dir, NOBODY, NOBODY);
  for (const rel of readdirSync(dir, { recursive: true, encoding: "utf8" }))
    chownSync(path.join(dir, rel), NOBODY, NOBODY);
}

/** `bash -c script` through `latch call local_shell` as nobody; the parsed result. */
async function shell(script: string): Promise<{ status: string; result?: Record<string, unknown>; message?: string }> {
  const run = await unprivileged().runCli(
    [
      "call",
      "local_shell",
      JSON.stringify({ command: "bash", args: ["-c", script] }),
      ...hostFlags(),
      "--yes", // `bash -c` needs a person's yes under auto_edit; it still runs contained
    ],
    { PATH, HOME: home, LANG: "C.UTF-8" },
  );
  assert.ok(run.json, `latch printed JSON: ${run.stdout} ${run.stderr}`);
  return run.json;
}

/** What a script that reads `rel` (first restoring every folder's modes) prints: the file, as hex. */
const readBack = (rel: string) =>
  `chmod -R u+rwX . 2>/dev/null; xxd -p "$(echo ${hex(rel)} | xxd -r -p)" 2>&1; echo READ-DONE`;

/** The user's own git, run as the user (root ignores modes, and git refuses a repository root does not own). */
function usersGit(cwd: string, ...args: string[]) {
  return spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "git", ...args], {
    cwd,
    env: {
      PATH,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "u",
      GIT_AUTHOR_EMAIL: "u@e",
      GIT_COMMITTER_NAME: "u",
      GIT_COMMITTER_EMAIL: "u@e",
    },
  });
}

/** The user's git lists `rel` as a gitlink (so its status enters it), and its status runs nothing of the model's. */
function assertGitEntersHarmlessly(repoDir: string, rel: string, marker: string): void {
  const gitlinks = String(usersGit(repoDir, "ls-files", "-s").stdout)
    .split("\n")
    .filter((l) => l.startsWith("160000 "))
    .map((l) => l.split("\t")[1]);
  assert.ok(gitlinks.includes(rel), `git lists ${rel} as a gitlink: ${gitlinks.join(", ")}`);
  usersGit(repoDir, "status", "--short");
  assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
}

function assertNoSecret(out: { result?: Record<string, unknown> }): void {
  const text = JSON.stringify(out);
  const stdout = typeof out.result?.stdout === "string" ? out.result.stdout : "";
  const bytes = Buffer.from(stdout.replace(/[^0-9a-f]/g, ""), "hex").toString("latin1");
  for (const v of VALUES) {
    assert.ok(!text.includes(v), `${v} leaked: ${text}`);
    assert.ok(!bytes.includes(v), `${v} leaked as hex: ${text}`);
  }
}

function assertSecretsInPlace(): void {
  for (const [rel, content] of Object.entries(SECRETS))
    assert.equal(readFileSync(path.join(ws, rel), "utf8"), content, `${rel} is where it was, unchanged`);
}

describe("folders the walk cannot read are masked whole (latch as an ordinary user)", () => {
  before(async () => {
    await requireSandbox();
    const base = mkdtempSync(path.join(unprivileged().tmp, "unreadable-"));
    ws = path.join(base, "ws");
    state = path.join(base, "state");
    home = path.join(base, "home");
    for (const d of [ws, state, home]) mkdirSync(d);
    for (const [rel, content] of Object.entries(SECRETS)) {
      mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      writeFileSync(path.join(ws, rel), content);
    }
    writeFileSync(path.join(ws, "notes.txt"), "public\n");
    execFileSync("git", ["init", "-q", path.join(ws, "t8")], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
    execFileSync("git", ["init", "-q", path.join(ws, "t7/repo")], {
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
    });
    // A worktree's `.git` file: where git looks for the repository (and its hooks) in t9/sub.
    mkdirSync(path.join(ws, "t9/sub"), { recursive: true });
    writeFileSync(path.join(ws, "t9/sub/.git"), GITFILE);
    // A repository with the user's hook, and an `.envrc`, in a folder whose mode will flip.
    execFileSync("git", ["init", "-q", path.join(ws, "t10/repo")], {
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
    });
    writeFileSync(path.join(ws, "t10/repo/.git/hooks/pre-commit"), HOOK, { mode: 0o755 });
    writeFileSync(path.join(ws, "t10/.envrc"), "export USERS_OWN=1\n");
    // A submodule's git folder, with the user's own hook and worktree setting.
    const sub = path.join(ws, "t7/repo/.git/modules/m");
    mkdirSync(path.join(sub, "hooks"), { recursive: true });
    writeFileSync(path.join(sub, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(sub, "config"), "[core]\n\tworktree = ../../../m\n");
    writeFileSync(path.join(sub, "hooks/pre-commit"), "#!/bin/sh\necho users-own\n", { mode: 0o755 });
    chownTree(base);
    mkdirSync(path.join(base, "roots-own", "bin"), { recursive: true, mode: 0o700 }); // root's, after the chown
    PATH = `${path.join(base, "roots-own", "bin")}:${process.env.PATH}`;
    chmodSync(base, 0o755);
  });

  for (const [tree, what, chmod, rel] of [
    [
      "t1",
      "search but no read (chmod 311), read by name",
      "chmod 311 t1/services && touch t1/services",
      "t1/services/api/.env",
    ],
    ["t2", "read but no search (chmod 600)", "chmod 600 t2/services && touch t2/services", "t2/services/.env"],
    ["t3", "no permission at all (chmod 000)", "chmod 000 t3/cfg && touch t3/cfg", "t3/cfg/.env.local"],
  ] as const) {
    test(`${what}: the next call reads no secret`, async () => {
      const first = await shell(`${chmod}; echo CHMOD-DONE`);
      assert.equal(first.status, "ok", JSON.stringify(first));
      assert.equal(first.result!.contained, true, JSON.stringify(first));
      assert.match(String(first.result!.stdout), /CHMOD-DONE/);
      // By name, with the modes as the first call left them (search without read is enough), then
      // with the modes restored inside the box.
      const byName = await shell(`xxd -p "$(echo ${hex(rel)} | xxd -r -p)" 2>&1; echo READ-DONE`);
      assert.equal(byName.status, "ok", JSON.stringify(byName));
      assert.match(String(byName.result!.stdout), /READ-DONE/);
      assertNoSecret(byName);
      const restored = await shell(readBack(rel));
      assert.equal(restored.status, "ok", JSON.stringify(restored));
      assert.match(String(restored.result!.stdout), /READ-DONE/);
      assertNoSecret(restored);
      // Outside the box the modes are the first call's still: the box's chmod met a read-only mask.
      chmodSync(path.join(ws, tree), 0o755);
      for (const d of [path.dirname(path.join(ws, rel)), path.join(ws, tree, rel.split("/")[1])]) chmodSync(d, 0o755);
      assertSecretsInPlace();
    });
  }

  /** One `latch mcp` as nobody over stdio, closed after the test; `call` runs `script` contained, with no question. */
  async function server(t: TestContext) {
    const { command, args } = unprivileged().command(["mcp", ...hostFlags()]);
    const client = new Client({ name: "unreadable-test", version: "1" });
    await client.connect(
      new StdioClientTransport({ command, args, env: { PATH, HOME: home, LANG: "C.UTF-8" }, stderr: "ignore" }),
    );
    t.after(() => client.close());
    const tool = async (name: string, args: Record<string, unknown>) => {
      const out = await client.callTool({ name, arguments: args });
      assert.notEqual(out.isError, true, JSON.stringify(out));
      return JSON.stringify(out);
    };
    // `node -e` runs contained with no question under auto_edit (a shell line would ask a person).
    const node = (js: string, background = false) =>
      tool("local_shell", { command: "node", args: ["-e", js], ...(background ? { background } : {}) });
    const call = (script: string) =>
      node(`require("child_process").execSync(${JSON.stringify(script)}, { stdio: "inherit" })`);
    return { tool, node, call };
  }

  /** A background process flipping `dir`'s mode between 0000 and 0755 until killed; its id. */
  async function flipping(node: (js: string, background?: boolean) => Promise<string>, dir: string) {
    const js = `const fs = require("fs"); for (;;) { fs.chmodSync(${JSON.stringify(dir)}, 0); fs.chmodSync(${JSON.stringify(dir)}, 0o755); }`;
    const started = await node(js, true);
    const id = /"id\\?":\\?"([^"\\]+)/.exec(started)?.[1];
    assert.ok(id, `the background process started: ${started}`);
    return id;
  }

  /** No secret in a result, as text or as the hex the scripts print. */
  function assertNoSecretIn(out: string): void {
    const hexOut = out.match(/[0-9a-f]{16,}/g)?.join("") ?? "";
    for (const v of VALUES) {
      assert.ok(!out.includes(v), `${v} leaked: ${out}`);
      assert.ok(!Buffer.from(hexOut, "hex").toString("latin1").includes(v), `${v} leaked as hex: ${out}`);
    }
  }

  test("a long-lived server: a chmod alone (no name changed) makes the walk look again", async (t) => {
    // One `latch mcp`, whose walk keeps each folder's listing while the folder is unchanged: a chmod
    // changes its ctime, not its mtime, so a listing kept by mtime still named `.env` as readable.
    const { call } = await server(t);
    assert.match(await call("ls t4/services; echo WALKED"), /WALKED/); // the walk keeps t4/services's listing
    assert.match(await call("chmod 600 t4/services; echo CHMOD-DONE"), /CHMOD-DONE/);
    const read = await call(readBack("t4/services/.env"));
    assert.match(read, /READ-DONE/);
    assertNoSecretIn(read);
    chmodSync(path.join(ws, "t4/services"), 0o755);
    assertSecretsInPlace();
  });

  test("a background process flipping a folder's mode between the walk and the mounts reads nothing", async (t) => {
    // Review h2, tried for real: the walk found t6/.env while t6 was 0755; the mounts' realpath met it at
    // 0000 (EACCES) and dropped the mask as "leads nowhere"; the mode flipped back and the call read the
    // file (5 of 30 calls). The walk's own finding is masked now, with no call between.
    const { tool, node } = await server(t);
    const id = await flipping(node, "t6");
    const name = hex("t6/.env");
    const reader = [
      `const fs = require("fs"); const f = Buffer.from("${name}", "hex").toString();`,
      `for (let i = 0; i < ${TRIES}; i++) { try { const c = fs.readFileSync(f); if (c.length) { console.log("LEAK " + c.toString("hex")); process.exit(0); } } catch {} }`,
      `console.log("NO-LEAK");`,
    ].join("\n");
    let ran = 0;
    for (let i = 0; i < CHMOD_RACES; i++) {
      const out = await tool("local_shell", { command: "node", args: ["-e", reader] });
      assertNoSecretIn(out);
      assert.doesNotMatch(out, /LEAK [0-9a-f]/, out);
      if (out.includes("NO-LEAK")) ran++;
    }
    await tool("process_kill", { id });
    assert.ok(ran > 0, "some readers ran (the rest were stopped at the start, a mount made impossible by the flip)");
    chmodSync(path.join(ws, "t6"), 0o755);
    assertSecretsInPlace();
  });

  test("a background process flipping a git folder's mode cannot get its config written", async (t) => {
    // Review h4 and after: a stat that met the flipped mode (EACCES) was read as "absent": by the masks
    // (no read-only mount for config), and by the guard, which then removed the user's config, hooks
    // and info as made during the call, so the next call found no config to keep read-only.
    const { tool, node } = await server(t);
    const id = await flipping(node, "t8/.git");
    const writer = [
      `const fs = require("fs");`,
      `for (let i = 0; i < ${TRIES}; i++) { try { fs.appendFileSync("t8/.git/config", "#x\\n"); console.log("WRO" + "TE"); process.exit(0); } catch {} }`,
      `console.log("NOT-WRITTEN");`,
    ].join("\n");
    for (let i = 0; i < CHMOD_RACES; i++) {
      const out = await tool("local_shell", { command: "node", args: ["-e", writer] });
      assert.doesNotMatch(out, /WROTE/, out);
    }
    await tool("process_kill", { id });
    chmodSync(path.join(ws, "t8/.git"), 0o755);
    const config = readFileSync(path.join(ws, "t8/.git/config"), "utf8");
    assert.doesNotMatch(config, /#x/);
    assert.match(config, /repositoryformatversion/, "the user's config is still there");
    assert.equal(existsSync(path.join(ws, "t8/.git/hooks")), true, "and its hooks");
  });

  test("a background process flipping folders' modes: a `.git` file is not repointed, nothing of the user's removed", async (t) => {
    // A `.git` file names the repository git uses there, hooks and config included. Its read-only mount
    // took a stat that met the flipped mode for "absent", so the file was writable in that call: rewritten
    // in place (the same inode, so the guard saw nothing new), the user's next git there ran another
    // repository's hooks. And the guard's own look, blinded so, took the user's file for a new one, as it
    // took a repository or an `.envrc` behind a shut folder (its hooks and config keys removed).
    const { tool, node } = await server(t);
    const id = await flipping(node, "t9/sub");
    const other = await flipping(node, "t10");
    const writer = [
      `const fs = require("fs");`,
      `for (let i = 0; i < ${TRIES}; i++) { try { fs.writeFileSync("t9/sub/.git", "gitdir: ../../elsewhere\\n"); console.log("WRO" + "TE"); process.exit(0); } catch {}`,
      ` try { fs.appendFileSync("t10/repo/.git/hooks/pre-commit", "echo models\\n"); console.log("WRO" + "TE"); process.exit(0); } catch {} }`,
      `console.log("NOT-WRITTEN");`,
    ].join("\n");
    for (let i = 0; i < CHMOD_RACES; i++) {
      const out = await tool("local_shell", { command: "node", args: ["-e", writer] });
      assert.doesNotMatch(out, /WROTE/, out);
    }
    for (const i of [id, other]) await tool("process_kill", { id: i });
    for (const d of ["t9/sub", "t10"]) chmodSync(path.join(ws, d), 0o755);
    assert.equal(readFileSync(path.join(ws, "t9/sub/.git"), "utf8"), GITFILE, "the user's `.git` file, as it was");
    assert.equal(readFileSync(path.join(ws, "t10/repo/.git/hooks/pre-commit"), "utf8"), HOOK, "the user's hook");
    assert.match(readFileSync(path.join(ws, "t10/repo/.git/config"), "utf8"), /repositoryformatversion/);
    assert.equal(readFileSync(path.join(ws, "t10/.envrc"), "utf8"), "export USERS_OWN=1\n", "the user's .envrc");
  });

  test("a secret's name linked into a folder latch may not enter does not stop every later process", async () => {
    // Review h1: the folders above a masked path are found through its realpath, which fails there
    // (EACCES); that failure reached bwrap's arguments and every contained call ended with exit 126.
    const made = await shell(
      `mkdir t5 && chmod 000 t5 && ln -s t5/x "$(echo ${hex(".env.production")} | xxd -r -p)"; echo MADE`,
    );
    assert.match(String(made.result?.stdout), /MADE/);
    const next = await shell("echo STILL-RUNS");
    assert.equal(next.status, "ok", JSON.stringify(next));
    assert.equal(next.result!.exit_code, 0, JSON.stringify(next));
    assert.match(String(next.result!.stdout), /STILL-RUNS/);
  });

  test("a git folder made unsearchable is given back at its check, and its config and hooks stay the user's", async () => {
    // Review h2: with `.git` at 0000 the masks could not see its config and hooks, so the next call
    // chmod'ed it back and wrote both; the guard, which had not been able to look before that call,
    // then removed the user's config, hooks and info as new. Review g45: the call's check now gives
    // it back at once; shut by the user, it stops the next process.
    const gitDir = path.join(ws, "t7/repo/.git");
    const config = readFileSync(path.join(gitDir, "config"), "utf8");
    const first = await shell("chmod 000 t7/repo/.git; echo CHMOD-DONE");
    assert.match(String(first.result?.stdout), /CHMOD-DONE/);
    assert.match(
      JSON.stringify(first.result?.undone),
      /"path":"t7\/repo\/.git","what":"made unreadable during the call \(mode 0000\)/,
    );
    const next = await shell(
      "chmod 755 t7/repo/.git && echo '#!/bin/sh' > t7/repo/.git/hooks/pre-commit; " +
        "printf '[core]\\n\\tfsmonitor = touch /tmp/PWNED\\n' >> t7/repo/.git/config; echo WROTE",
    );
    assert.match(String(next.result?.stderr), /pre-commit: Read-only file system/, JSON.stringify(next));
    assert.match(String(next.result?.stderr), /config: Read-only file system/, JSON.stringify(next));
    chmodSync(gitDir, 0o000); // the user's own chmod, which the baseline sees
    const refused = await shell("echo STARTED");
    assert.doesNotMatch(String(refused.result?.stdout), /STARTED/, JSON.stringify(refused));
    // Nor is its rebase state, which latch may not open, said `NOT undone` (review g46).
    assert.equal(refused.result?.undone, undefined, JSON.stringify(refused));
    assert.match(
      JSON.stringify(refused),
      /cannot keep the config and hooks of `t7\/repo\/\.git` read-only.*chmod u\+rx/,
    );
    // The user's own chmod stays, and nothing it hid is taken for new (a first fix gave it back, and
    // neutralized the submodule's git folder below it as a repository the call made).
    assert.equal(lstatSync(gitDir).mode & 0o777, 0o000, "the user's chmod was undone");
    chmodSync(gitDir, 0o755);
    assert.equal(readFileSync(path.join(gitDir, "modules/m/config"), "utf8"), "[core]\n\tworktree = ../../../m\n");

    assert.equal(readFileSync(path.join(gitDir, "config"), "utf8"), config);
    assert.equal(existsSync(path.join(gitDir, "hooks/pre-commit")), false);
    assert.equal(existsSync(path.join(gitDir, "info")), true, "the guard removed nothing of the user's");
    const again = await shell("cat notes.txt");
    assert.match(String(again.result?.stdout), /public/);
  });

  test("a stopped rebase's state latch may not read is set aside at once (g16, g44)", async () => {
    // Review g16: a later call's look at `.git/rebase-merge` (mode 000) met EACCES and took nothing
    // there as the user's; the call opened it again and added an exec line. Review g44: at 0333 the
    // check could not open the folder, said NOT checked and left it, and git (which needs only write
    // and search there) ran the exec line at the user's `git rebase --continue`. Now such a state is
    // renamed aside by the check of the call that shut it.
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: home };
    const stopped = (name: string) => {
      const repo = path.join(ws, name);
      const git = (...a: string[]) =>
        execFileSync("git", ["-C", repo, "-c", "user.email=u@x", "-c", "user.name=u", ...a], { env });
      execFileSync("git", ["init", "-q", repo], { env });
      for (const f of ["a", "b"]) {
        writeFileSync(path.join(repo, f), `${f}\n`);
        git("add", f);
        git("commit", "-q", "-m", f);
      }
      chownTree(repo);
      return repo;
    };
    const marker = path.join(home, "g44-exec-ran");
    for (const [name, mode] of [
      ["t11", "000"],
      ["t11b", "333"],
    ] as const) {
      const repo = stopped(name);
      const out = await shell(
        `cd ${name} && GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git rebase -q -i HEAD~1; ` +
          `echo 'exec touch ${marker}' >> .git/rebase-merge/git-rebase-todo; chmod ${mode} .git/rebase-merge; echo SHUT`,
      );
      assert.match(String(out.result?.stdout), /SHUT/, JSON.stringify(out));
      const undone = JSON.stringify(out.result?.undone);
      assert.match(
        undone,
        new RegExp(
          `"path":"${name}/\\.git/rebase-merge","what":"set aside \\(renamed, not deleted\\): one latch may not read`,
        ),
        undone,
      );
      assert.equal(existsSync(path.join(repo, ".git/rebase-merge")), false, `${name}: still there`);
      usersGit(repo, "-c", "core.editor=true", "rebase", "--continue");
      assert.equal(existsSync(marker), false, `${name}: the user's git rebase --continue ran the model's exec line`);
    }
  });

  test("attack: a new repository's config shut by its call is set aside, and the next call is guarded (g44)", async () => {
    // Review g44: `chmod 000` on the config of a repository the call made left it `NOT undone`, and
    // every later call's look threw on it (EACCES) and ran unguarded: the second call's repository
    // with core.fsmonitor stayed, and the user's git status there ran it.
    const marker = path.join(home, "g44-fsmonitor-ran");
    const shut = await shell("git init -q t20/sub && chmod 000 t20/sub/.git/config && echo SHUT");
    assert.match(String(shut.result?.stdout), /SHUT/, JSON.stringify(shut));
    assert.match(JSON.stringify(shut.result?.undone), /"path":"t20\/sub\/.git\/config","what":"rewritten/);
    const armed = await shell(
      `git init -q t20/evil && git -C t20/evil config core.fsmonitor 'touch ${marker}; false' && echo ARMED`,
    );
    assert.match(String(armed.result?.stdout), /ARMED/, JSON.stringify(armed));
    const undone = JSON.stringify(armed.result?.undone);
    assert.doesNotMatch(undone, /NOT checked/, undone);
    assert.match(undone, /"path":"t20\/evil\/.git\/config","what":"rewritten/, undone);
    usersGit(path.join(ws, "t20/evil"), "status", "--short");
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  });

  test("attack: a new repository's hooks folder made search-only is set aside all the same (g45)", async () => {
    // Review g45: its set-aside first looked inside for what was there (to keep it), met EACCES and
    // left the folder `NOT undone`; git runs a hook there by name, and the user's commit ran it.
    const marker = path.join(home, "g45-hook-ran");
    const out = await shell(
      `git init -q t22/evil && printf '#!/bin/sh\\ntouch ${marker}\\n' > t22/evil/.git/hooks/pre-commit && ` +
        "chmod +x t22/evil/.git/hooks/pre-commit && chmod 100 t22/evil/.git/hooks && echo MADE",
    );
    assert.match(String(out.result?.stdout), /MADE/, JSON.stringify(out));
    const undone = JSON.stringify(out.result?.undone);
    assert.match(
      undone,
      /"path":"t22\/evil\/.git\/hooks","what":"renamed to `hooks\.latch-aside-[0-9a-f]{12}`/,
      undone,
    );
    assert.equal(existsSync(path.join(ws, "t22/evil/.git/hooks")), false);
    usersGit(path.join(ws, "t22/evil"), "commit", "-q", "--allow-empty", "-m", "x");
    assert.equal(existsSync(marker), false, "the model's hook ran at the user's git commit");
  });

  // Review g45: (1) the walk lists a `.git` and never enters it, so no round gave it back, the config's
  // rewrite met EACCES and left it `NOT undone`, and git, which needs only search permission there,
  // ran its core.fsmonitor; (2) the look for the root's own `.git` threw EACCES outside the walk's
  // handling, so the whole check said `NOT checked`, and the root stayed shut.
  for (const [repo, chmod, shut, mode] of [
    ["t23/evil", "chmod 100 t23/evil/.git", "t23/evil/.git", "0100"],
    ["t24/evil", 'chmod 600 "$PWD"', ".", "0600"],
  ] as const)
    test(`attack: a new repository, then \`${chmod}\`: given back and neutralized (g45)`, async () => {
      const marker = path.join(home, `g45-${repo.replace("/", "-")}-ran`);
      const out = await shell(
        `git init -q ${repo} && git -C ${repo} config core.fsmonitor 'touch ${marker}; false' && ${chmod} && echo MADE`,
      );
      chmodSync(ws, 0o755);
      assert.match(String(out.result?.stdout), /MADE/, JSON.stringify(out));
      const undone = out.result?.undone as { path: string; what: string }[];
      assert.ok(!JSON.stringify(undone).includes("NOT "), JSON.stringify(undone));
      assert.ok(
        undone.some((u) => u.path === shut && u.what.startsWith(`made unreadable during the call (mode ${mode})`)),
        JSON.stringify(undone),
      );
      assert.ok(
        undone.some((u) => u.path === `${repo}/.git/config` && u.what.startsWith("rewritten")),
        JSON.stringify(undone),
      );
      assert.doesNotMatch(readFileSync(path.join(ws, repo, ".git/config"), "utf8"), /fsmonitor/);
      usersGit(path.join(ws, repo), "status", "--short");
      assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
    });

  test("a submodule's git folder made unsearchable is given back; the user's hook and config stay", async () => {
    // Review h3: not listed as a git folder (its HEAD could not be seen), so the check above missed it.
    const m = path.join(ws, "t7/repo/.git/modules/m");
    const first = await shell("chmod 000 t7/repo/.git/modules/m; echo CHMOD-DONE");
    assert.match(String(first.result?.stdout), /CHMOD-DONE/);
    assert.match(
      JSON.stringify(first.result?.undone),
      /"path":"t7\/repo\/.git\/modules\/m","what":"made unreadable during the call \(mode 0000\)/,
    );
    const next = await shell(
      "chmod 755 t7/repo/.git/modules/m && echo '#!/bin/sh' > t7/repo/.git/modules/m/hooks/post-checkout; echo WROTE",
    );
    assert.match(String(next.result?.stderr), /post-checkout: Read-only file system/, JSON.stringify(next));
    chmodSync(m, 0o000); // the user's own chmod
    const refused = await shell("echo STARTED");
    assert.doesNotMatch(String(refused.result?.stdout), /STARTED/, JSON.stringify(refused));
    // Nor is its rebase state, which latch may not open, said `NOT undone` (review g46).
    assert.equal(refused.result?.undone, undefined, JSON.stringify(refused));
    assert.match(
      JSON.stringify(refused),
      /cannot keep the config and hooks of `t7\/repo\/\.git\/modules\/m` read-only/,
    );
    chmodSync(m, 0o755);
    assert.equal(readFileSync(path.join(m, "config"), "utf8"), "[core]\n\tworktree = ../../../m\n");
    assert.equal(readFileSync(path.join(m, "hooks/pre-commit"), "utf8"), "#!/bin/sh\necho users-own\n");
    assert.equal(existsSync(path.join(m, "hooks/post-checkout")), false);
  });

  test("attack: a repository made in the user's folder, then the folder made search-only, is checked all the same", async () => {
    // Review g31: `chmod 111` hid `src/.git` from the guard's walk (it could not list `src`), and git
    // needs only search permission to find it: the user's `git status` in src ran its core.fsmonitor.
    const src = path.join(ws, "t11/src");
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(src, "main.c"), "int main(void) { return 0; }\n");
    for (const p of [path.dirname(src), src, path.join(src, "main.c")]) chownSync(p, NOBODY, NOBODY);
    const marker = path.join(home, "g31-fsmonitor-ran");
    const out = await shell(
      `git init -q t11/src && git -C t11/src config core.fsmonitor 'touch ${marker}; false' && chmod 111 t11/src; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(String(out.result!.stdout), /DONE/);
    const undone = JSON.stringify(out.result!.undone);
    assert.match(undone, /"path":"t11\/src","what":"made unreadable during the call \(mode 0111\)/, undone);
    assert.match(undone, /"path":"t11\/src\/.git\/config","what":"rewritten/, undone);
    assert.doesNotMatch(readFileSync(path.join(src, ".git/config"), "utf8"), /fsmonitor/);
    assert.equal(readFileSync(path.join(src, "main.c"), "utf8"), "int main(void) { return 0; }\n");
    // The user's git, as the user (root ignores modes, and git refuses a repository root does not own).
    usersGit(src, "status", "--short");
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  });

  test("attack: a sparse directory whose tree holds a gitlink, its folder made search-only, is checked all the same (g54)", async () => {
    // The user's repository t30 with sparse checkout on. The call writes a tree holding gitlink `x`, puts
    // `node_modules/p/` in the index as a sparse directory naming it, arms node_modules/p/x and shuts
    // node_modules/p (chmod 100): git expands the tree and, needing only search permission, enters x;
    // latch could not list the folder and said only NOT checked.
    const repoDir = path.join(ws, "t30");
    mkdirSync(repoDir, { recursive: true });
    writeFileSync(path.join(repoDir, "a.txt"), "a\n");
    writeFileSync(path.join(repoDir, "sdir.py"), SPARSE_ENTRY);
    chownTree(repoDir);
    for (const args of [
      ["init", "-q"],
      ["add", "a.txt"],
      ["commit", "-qm", "a"],
      ["sparse-checkout", "init", "--cone"],
    ])
      assert.equal(usersGit(repoDir, ...args).status, 0, args.join(" "));
    const marker = path.join(home, "g54-fsmonitor-ran");
    const out = await shell(
      `cd t30 && git init -q node_modules/p/x && git -C node_modules/p/x config core.fsmonitor 'touch ${marker}; false' && ` +
        `T=$(printf '160000 commit ${"1".repeat(40)}\\tx\\n' | git mktree --missing) && ` +
        `python3 sdir.py .git/index $T node_modules/p/ && chmod 100 node_modules/p; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(String(out.result!.stdout), /DONE/);
    const undone = JSON.stringify(out.result!.undone);
    assert.match(
      undone,
      /"path":"t30\/node_modules\/p","what":"unreadable at this check \(latch had not looked there before the call\) \(mode 0100\)/,
      undone,
    );
    assert.match(undone, /"path":"t30\/node_modules\/p\/x\/.git\/config","what":"rewritten/, undone);
    assertGitEntersHarmlessly(repoDir, "node_modules/p/x", marker);
  });

  test("attack: a gitlinked folder, or one on its way, made search-only is checked all the same (g56)", async () => {
    // The call arms node_modules/x and node_modules/a/b, gitlinks both in the user's index and shuts
    // node_modules/x and node_modules/a (chmod 111): git needs only search permission to enter them;
    // latch, looking through descriptors, could not open them and said only NOT checked.
    const repoDir = path.join(ws, "t31");
    mkdirSync(repoDir, { recursive: true });
    writeFileSync(path.join(repoDir, "a.txt"), "a\n");
    chownTree(repoDir);
    for (const args of [
      ["init", "-q"],
      ["add", "a.txt"],
      ["commit", "-qm", "a"],
    ])
      assert.equal(usersGit(repoDir, ...args).status, 0, args.join(" "));
    const marker = path.join(home, "g56-fsmonitor-ran");
    const arm = (rel: string) =>
      `git init -q ${rel} && git -C ${rel} config core.fsmonitor 'touch ${marker}; false' && ` +
      `git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),${rel}`;
    const out = await shell(
      `cd t31 && ${arm("node_modules/x")} && ${arm("node_modules/a/b")} && chmod 111 node_modules/x node_modules/a; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(String(out.result!.stdout), /DONE/);
    const undone = JSON.stringify(out.result!.undone);
    assert.doesNotMatch(undone, /NOT checked/, undone);
    // node_modules/x is given back (the baseline's walk never looked below node_modules: the result does
    // not say the call shut it, review g57); node_modules/a need not be (its git folder opens by its
    // whole name, as git's does), and the rebase state that is not there is not said set aside.
    assert.match(
      undone,
      /"path":"t31\/node_modules\/x","what":"unreadable at this check \(latch had not looked there before the call\) \(mode 0111\)/,
      undone,
    );
    assert.doesNotMatch(undone, /rebase-merge|sequencer|rebase-apply/, undone);
    for (const rel of ["node_modules/x", "node_modules/a/b"])
      assert.match(undone, new RegExp(`"path":"t31/${rel}/.git/config","what":"rewritten`), undone);
    assertGitEntersHarmlessly(repoDir, "node_modules/a/b", marker);
  });

  test("attack: a repository under node_modules behind a link in src's place, its folder named in bytes and shut", async () => {
    // Review g36: the walk skips node_modules, and the user's `cd src` goes where the link leads. Shut
    // (chmod 000), the repository is hidden from latch, not from the user's git as root; review g38:
    // under a name that is not UTF-8, the folder to open was not found.
    const marker = path.join(home, "g36-fsmonitor-ran");
    mkdirSync(path.join(ws, "t18/src"), { recursive: true });
    writeFileSync(path.join(ws, "t18/src/main.c"), "int main(void) { return 0; }\n");
    chownTree(path.join(ws, "t18"));
    const x = "node_modules/$'\\xff'";
    const out = await shell(
      `cd t18 && git init -q ${x} && git -C ${x} config core.fsmonitor 'touch ${marker}; false' && ` +
        `mkdir ${x}/lib && mv src/main.c ${x}/lib/ && rmdir src && ln -s ${x}/lib src && ` +
        `chmod 000 ${x}; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(String(out.result!.stdout), /DONE/);
    const undone = JSON.stringify(out.result!.undone);
    assert.match(
      undone,
      /"path":"t18\/node_modules\/[^"/]+","what":"unreadable at this check \(latch had not looked there before the call\) \(mode 0000\)/,
      undone,
    );
    assert.match(undone, /"path":"t18\/node_modules\/[^"/]+\/.git\/config","what":"rewritten/, undone);
    // The user's git as root, who enters what is shut (and takes nobody's repository as the user's).
    spawnSync("git", ["-c", "safe.directory=*", "status", "--short"], {
      cwd: path.join(ws, "t18/src"),
      env: { PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
    });
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  });

  test("attack: the same behind two search-only folders, and behind the workspace itself made search-only", async () => {
    // Review g32: the folders were given back one walk deep (`src/a` stayed shut inside `src`), and
    // the root itself could not be (its parent was opened for reading).
    const marker = path.join(home, "g32-fsmonitor-ran");
    const arm = (repo: string) =>
      `git init -q ${repo} && git -C ${repo} config core.fsmonitor 'touch ${marker}; false'`;
    for (const [repo, chmod, shut] of [
      ["t12/a/b", "chmod 111 t12/a && chmod 111 t12", ["t12", "t12/a"]],
      ["t13/b", "chmod 111 .", ["."]],
    ] as const) {
      const out = await shell(`mkdir -p ${repo} && ${arm(repo)} && ${chmod}; echo DONE`);
      assert.equal(out.status, "ok", JSON.stringify(out));
      const undone = out.result!.undone as { path: string; what: string }[];
      for (const d of shut)
        assert.ok(
          undone.some((u) => u.path === d && /^made unreadable during the call \(mode 0111\)/.test(u.what)),
          `${d}: ${JSON.stringify(undone)}`,
        );
      assert.ok(
        undone.some((u) => u.path === `${repo}/.git/config` && /^rewritten/.test(u.what)),
        JSON.stringify(undone),
      );
      chmodSync(ws, 0o755);
      assert.doesNotMatch(readFileSync(path.join(ws, repo, ".git/config"), "utf8"), /fsmonitor/);
      usersGit(path.join(ws, repo), "status", "--short");
      assert.equal(existsSync(marker), false, `${repo}: the model's core.fsmonitor ran at the user's git status`);
    }
  });

  test("attack: a repository behind 17 search-only folders: the 17th, which latch does not open, is set aside", async () => {
    // Review g33: past the 16 levels given back, the folder had only its search permission taken
    // off; the user giving its modes back found the model's repository armed, unchecked.
    const marker = path.join(home, "g33-fsmonitor-ran");
    const dirs = Array.from(
      { length: 17 },
      (_, i) => `t14/${Array.from({ length: i + 1 }, (_, k) => `d${k + 1}`).join("/")}`,
    );
    const deepest = dirs[16];
    const out = await shell(
      `mkdir -p ${deepest}/b && git init -q ${deepest}/b && ` +
        `git -C ${deepest}/b config core.fsmonitor 'touch ${marker}; false' && ` +
        `${[...dirs]
          .reverse()
          .map((d) => `chmod 111 ${d}`)
          .join(" && ")}; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    const undone = out.result!.undone as { path: string; what: string }[];
    for (const d of dirs.slice(0, 16))
      assert.ok(
        undone.some((u) => u.path === d && /^made unreadable/.test(u.what)),
        `${d}: ${JSON.stringify(undone)}`,
      );
    const aside = undone.find((u) => u.path === deepest);
    assert.match(
      aside?.what ?? "",
      /^renamed to `d17\.latch-aside-[0-9a-f]{12}` \(set aside, not deleted\): .*NOT checked; its search permission taken off \(mode 0111 before\)$/,
    );
    assert.equal(existsSync(path.join(ws, deepest)), false, "nothing is left where the user's git would look");
    // Review g55: left searchable, a later call's gitlink into it by the name said made the user's git
    // enter the repository there (git needs search permission alone).
    const asideName = /`([^`]+)`/.exec(aside!.what)![1];
    assert.equal(lstatSync(path.join(ws, dirs[15], asideName)).mode & 0o111, 0, "git can no longer enter it");
    usersGit(path.join(ws, dirs[15]), "status", "--short");
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  });

  test("attack: a new repository's `.git` shut below 16 search-only folders is set aside (g46)", async () => {
    // Review g46: the walk after the 16th round was the first to list the shut `.git`, and what was
    // still shut after the rounds was the walk's folders alone: the config stayed `NOT undone`.
    const marker = path.join(home, "g46-fsmonitor-ran");
    const dirs = Array.from(
      { length: 16 },
      (_, i) => `t25/${Array.from({ length: i + 1 }, (_, k) => `d${k + 1}`).join("/")}`,
    );
    const repo = `${dirs[15]}/evil`;
    const out = await shell(
      `mkdir -p ${repo} && git init -q ${repo} && git -C ${repo} config core.fsmonitor 'touch ${marker}; false' && ` +
        `chmod 100 ${repo}/.git && ${[...dirs]
          .reverse()
          .map((d) => `chmod 111 ${d}`)
          .join(" && ")}; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    const undone = out.result!.undone as { path: string; what: string }[];
    const aside = undone.find((u) => u.path === `${repo}/.git`);
    assert.match(
      aside?.what ?? "",
      /^renamed to `\.git\.latch-aside-[0-9a-f]{12}` \(set aside, not deleted\): .*NOT checked/,
    );
    assert.ok(!undone.some((u) => u.what.startsWith("NOT undone")), JSON.stringify(undone));
    assert.equal(existsSync(path.join(ws, repo, ".git")), false, "nothing is left where the user's git would look");
    usersGit(path.join(ws, repo), "status", "--short");
    assert.equal(existsSync(marker), false, "the model's core.fsmonitor ran at the user's git status");
  });

  test("attack: the user's folder below 16 search-only folders removed and made again, shut, a repository in it (g47)", async (t) => {
    // Review g47: `rm -rf u; mkdir u` got u's inode back, and the guard, which knew the user's folders
    // by inode alone, took the model's shut `u` for the user's: its search permission was taken off,
    // and the repository inside stayed armed for the user's `chmod 755 u`.
    const marker = path.join(home, "g47-fsmonitor-ran");
    const dirs = Array.from(
      { length: 16 },
      (_, i) => `t26/${Array.from({ length: i + 1 }, (_, k) => `d${k + 1}`).join("/")}`,
    );
    const u = `${dirs[15]}/u`;
    mkdirSync(path.join(ws, u), { recursive: true });
    writeFileSync(path.join(ws, u, "keep.txt"), "the user's\n");
    chownTree(path.join(ws, "t26"));
    const ino = lstatSync(path.join(ws, u)).ino;
    const out = await shell(
      `rm -rf ${u} && mkdir ${u} && git init -q ${u}/evil && ` +
        `git -C ${u}/evil config core.fsmonitor 'touch ${marker}; false' && ls -id ${u} && chmod 000 ${u} && ` +
        `${[...dirs]
          .reverse()
          .map((d) => `chmod 111 ${d}`)
          .join(" && ")}; echo DONE`,
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    t.diagnostic(`the made-again folder's inode was ${String(out.result!.stdout).split(" ")[0]}, the user's ${ino}`);
    const undone = out.result!.undone as { path: string; what: string }[];
    assert.match(
      undone.find((u2) => u2.path === u)?.what ?? "",
      /^renamed to `u\.latch-aside-[0-9a-f]{12}` \(set aside, not deleted\)/,
      JSON.stringify(undone),
    );
    // Left shut in place, it waited for the user's `chmod 755 u`; set aside, nothing is where they look.
    assert.equal(existsSync(path.join(ws, u)), false, "nothing is left where the user's git would look");
  });

  test("attack: what a call made in folders it left read-only (chmod 555) is set aside all the same", async () => {
    // Review g34: a folder its owner may not write can still be read, so it is not given back; the
    // set-aside (a rename in it) failed with EACCES, and what it kept stayed armed for good: a new
    // repository's config (t15), its hook (t16), and a `.git/commondir` in the user's own repository
    // naming a copy armed with core.fsmonitor (t8).
    const marker = path.join(home, "g34-ran");
    const arm = (gitDir: string) => `git --git-dir=${gitDir} config core.fsmonitor 'touch ${marker}; false'`;
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n' > t16/.git/hooks/pre-commit && chmod 755 t16/.git/hooks/pre-commit`;
    const out = await shell(
      `git init -q t15 && ${arm("t15/.git")} && chmod 555 t15/.git && ` +
        `git init -q t16 && ${hook} && chmod 555 t16/.git/hooks && ` +
        `cp -r t8/.git t8-copy && ${arm("t8-copy")} && chmod 555 t8-copy && ` +
        `echo ../../t8-copy > t8/.git/commondir && chmod 555 t8/.git; echo DONE`,
    );
    assert.match(String(out.result?.stdout), /DONE/, JSON.stringify(out));
    const undone = JSON.stringify(out.result!.undone);
    assert.match(undone, /"path":"t15\/\.git\/config","what":"rewritten/);
    assert.match(
      undone,
      /"path":"t16\/\.git\/hooks\/pre-commit","what":"renamed to [^"]*mode 0555[^"]*read, write and search permission/,
    );
    assert.match(
      undone,
      /"path":"t8\/\.git\/commondir","what":"renamed to [^"]*mode 0555[^"]*read, write and search permission/,
    );
    const userGit = (cwd: string, ...args: string[]) => usersGit(path.join(ws, cwd), ...args);
    for (const repo of ["t15", "t8"]) userGit(repo, "status", "--short");
    userGit("t16", "commit", "-q", "--allow-empty", "-m", "user's commit");
    assert.equal(existsSync(marker), false, "the user's git ran what the model armed");
    for (const d of ["t15/.git", "t16/.git/hooks", "t8-copy", "t8/.git"]) chmodSync(path.join(ws, d), 0o755);
  });

  test("attack: a background process keeping a new repository's git folder at 0555 is stopped", async (t) => {
    // Review g35: a loop re-setting `chmod 555` beat each set-aside's give-back, the undo failed, and
    // a failed undo was no strike: the process ran on with core.fsmonitor armed (8 of 8 user's git runs).
    const marker = path.join(home, "g35-ran");
    const { tool, node } = await server(t);
    const armed = `[core]\\n\\tfsmonitor = touch ${marker}; false\\n`;
    const js = [
      `const fs = require("fs"); const cp = require("child_process");`,
      `cp.execFileSync("git", ["init", "-q", "t17"]); fs.appendFileSync("t17/.git/config", "${armed}");`,
      `for (let n = 0; ; n++) {`,
      `  try { fs.chmodSync("t17/.git", 0o555); } catch {}`,
      `  if (n % 2000 !== 0) continue;`,
      `  let text = ""; try { text = fs.readFileSync("t17/.git/config", "utf8"); } catch {}`,
      `  if (!text.includes("fsmonitor")) try { fs.chmodSync("t17/.git", 0o755); fs.appendFileSync("t17/.git/config", "${armed}"); } catch {}`,
      `}`,
    ].join("\n");
    const started = await node(js, true);
    const id = /"id\\?":\\?"([^"\\]+)/.exec(started)?.[1];
    assert.ok(id, `the background process started: ${started}`);
    let said = "";
    let running = true;
    for (let i = 0; i < 16 && running; i++) {
      await new Promise((r) => setTimeout(r, 1500));
      // The text's first line is the result's small fields as JSON (transports/mcp/results.ts).
      const text = (JSON.parse(await tool("process_list", {})) as { content: { text: string }[] }).content[0].text;
      const list = JSON.parse(text.split("\n")[0]) as {
        processes: { id: string; running: boolean }[];
        undone?: { what: string }[];
      };
      said += JSON.stringify(list.undone ?? []);
      running = list.processes.find((p) => p.id === id)?.running !== false;
    }
    assert.equal(running, false, `stopped by latch: ${said}`);
    assert.match(said, /stopped the process: latch (found this to undo|undid this) 3 times/);
    await tool("process_list", {}); // a check after its end
    chmodSync(path.join(ws, "t17/.git"), 0o755);
    usersGit(path.join(ws, "t17"), "status", "--short");
    assert.equal(existsSync(marker), false, "the user's git ran the model's core.fsmonitor");
  });

  test("links named like secrets that lead nowhere readable, outside, or over the workspace stop nothing", async () => {
    // Review h3: each of these, made by one contained call (or by the user), stopped every later one.
    const links: [string, string][] = [
      ["/root/no-such.key", "server.key"], // into a folder nobody may enter, outside the workspace
      ["notes.txt/x", "a.pem"], // ENOTDIR: nothing at the end
      ["/usr", "tools.pem"], // a system folder: a mask there would leave nothing to run
      [".", "here.pem"], // the workspace itself
      ["t3", "t3.pem"], // a folder holding secrets: masked whole, its own masks inside it skipped
    ];
    const made = await shell(
      links.map(([to, name]) => `ln -s ${to} "$(echo ${hex(name)} | xxd -r -p)"`).join(" && ") + "; echo MADE",
    );
    assert.match(String(made.result?.stdout), /MADE/, JSON.stringify(made));
    const next = await shell(
      `echo STILL-RUNS; ${readBack("t3/cfg/.env.local").replace("chmod -R u+rwX . 2>/dev/null; ", "")}`,
    );
    assert.equal(next.result?.exit_code, 0, JSON.stringify(next));
    assert.match(String(next.result.stdout), /STILL-RUNS/);
    assertNoSecret(next);
  });

  test("the workspace itself unreadable: nothing starts, and the message says how to fix it", async () => {
    // Made so by a call, it is given back at its check (review g32); made so by the user, it stays.
    const first = await shell("chmod 311 . && touch .; echo CHMOD-DONE");
    assert.match(String(first.result?.stdout), /CHMOD-DONE/);
    assert.match(
      JSON.stringify(first.result?.undone),
      /"path":".","what":"made unreadable during the call \(mode 0311\)/,
    );
    chmodSync(ws, 0o311);
    const next = await shell(readBack("t1/services/api/.env"));
    assertNoSecret(next);
    assert.match(JSON.stringify(next), /cannot list it \(permission denied\).*chmod u\+rx/);
    chmodSync(ws, 0o755);
    const again = await shell("cat notes.txt");
    assert.equal(again.status, "ok", JSON.stringify(again));
    assert.match(String(again.result!.stdout), /public/);
    assertSecretsInPlace();
  });
});
