// Names that are not valid UTF-8, tried for real. The sandbox's walk read names as text, and Node
// turns `\xff` into U+FFFD, a path that does not exist: before it walked such names as latch holds
// them (src/fs/names.ts), whatever sat below such a folder was out of its sight. A contained process (auto_edit runs `node` with no
// question) made `\xff/.envrc` and a repository `\xff/r` with `core.fsmonitor` (git runs it at the
// user's next `git status` there, and editors run git in every repository they find), and both
// outlived the call; a `.env` below such a folder was not masked. Each test checks the disk, the
// result and the policy log.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { denyApprover } from "../../src/approval/approver.js";
import { scanWorkspace } from "../../src/sandbox/secrets.js";
import { showName } from "../../src/fs/names.js";
import {
  decisions,
  makeSandboxFixture,
  requireSandbox,
  undoneAfterNode,
  type SandboxFixture,
} from "./sandbox-fixture.js";

type Out = { status: string; code?: string; message?: string; result?: Record<string, unknown> };

const fixtures: SandboxFixture[] = [];
after(() => fixtures.forEach((f) => f.cleanup()));

/** `rel` under `dir` as bytes, each `\xNN` in it the byte NN. */
function bytes(dir: string, rel: string): Buffer {
  return Buffer.concat([
    Buffer.from(dir + "/"),
    Buffer.from(
      rel.replace(/\\x([0-9a-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      "latin1",
    ),
  ]);
}

function outcomes(policyLog: string): Record<string, unknown>[] {
  return readFileSync(policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome");
}

test("the walk goes below names that are not UTF-8, and lists what it finds there", () => {
  const fx = makeSandboxFixture("latch-unnamed-scan-");
  fixtures.push(fx);
  mkdirSync(bytes(fx.root, "\\xff/deeper"), { recursive: true });
  mkdirSync(bytes(fx.root, "ok/caf\\xe9"), { recursive: true });
  writeFileSync(bytes(fx.root, "\\xff/deeper/.env"), "KEY=x\n");
  writeFileSync(bytes(fx.root, "ok/caf\\xe9/.envrc"), "echo\n");
  mkdirSync(bytes(fx.root, "\\xff/r/.git"), { recursive: true });
  writeFileSync(path.join(fx.root, "café.txt"), "a UTF-8 name, walked as text\n");
  // U+FFFD itself is valid UTF-8 (what Node reads for a byte that is not): walked as text, and a secret.
  writeFileSync(path.join(fx.root, "\uFFFD.pem"), "KEY\n");
  const scan = scanWorkspace(fx.root);
  const rel = (p: string) => showName(path.relative(fx.root, p));
  assert.deepEqual(scan.secrets.map(rel).sort(), ["\\xff/deeper/.env", "\uFFFD.pem"]);
  assert.deepEqual(scan.gitDirs.map(rel), ["\\xff/r/.git"]);
  assert.deepEqual(scan.runsLater.map(rel), ["ok/caf\\xe9/.envrc"]);
});

test("what runs later, made by a contained process below a name that is not UTF-8, is undone", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-unnamed-later-");
  fixtures.push(fx);
  const js = [
    `const fs = require("fs"); const cp = require("child_process");`,
    `const odd = (s) => Buffer.from(s, "latin1");`,
    `fs.mkdirSync(odd("\\xff")); fs.writeFileSync(odd("\\xff/.envrc"), "touch MARKER\\n");`,
    `fs.writeFileSync(odd("\\xff/data.txt"), "the model's own work\\n");`,
    `fs.mkdirSync(odd("\\xff/x\\xfd/.vscode"), { recursive: true });`,
    // git takes the path from a shell: Node's arguments and cwd are text.
    `cp.execFileSync("sh", ["-c", "cd \\"$(printf '\\\\377')\\" && git init -q r && git -C r config core.fsmonitor 'touch MARKER'"]);`,
    `fs.writeFileSync(odd("\\xff/.git"), "gitdir: /elsewhere\\n");`,
    // A submodule's git folder below the root's new .git: git reads its config and hooks there too.
    `fs.mkdirSync(odd(".git/modules/\\xff/hooks"), { recursive: true });`,
    `fs.writeFileSync(odd(".git/modules/\\xff/HEAD"), "ref: refs/heads/main\\n");`,
    `fs.writeFileSync(odd(".git/modules/\\xff/hooks/post-checkout"), "touch MARKER\\n", { mode: 0o755 });`,
  ].join("\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const undone = (await undoneAfterNode(host, js)).map((u) => u.path).sort();
  // A repository below such a name stops being one (neither `HEAD` nor `.git` by those names), its
  // config and hooks made safe first; nothing of it is deleted.
  assert.deepEqual(undone, [
    ".git/modules/\\xff",
    ".git/modules/\\xff/HEAD",
    ".git/modules/\\xff/hooks/post-checkout",
    "\\xff/.envrc",
    "\\xff/.git",
    "\\xff/r/.git",
    "\\xff/r/.git/HEAD",
    "\\xff/r/.git/config",
    "\\xff/x\\xfd/.vscode",
  ]);
  // The disk: the control entries gone, the rest of the model's work and the user's own kept.
  for (const rel of [".git/modules/\\xff", "\\xff/.envrc", "\\xff/.git", "\\xff/r/.git", "\\xff/x\\xfd/.vscode"])
    assert.equal(existsSync(bytes(fx.root, rel)), false, `${rel} is still there`);
  assert.equal(readFileSync(bytes(fx.root, "\\xff/data.txt"), "utf8"), "the model's own work\n");
  const [kept, ...more] = readdirSync(bytes(fx.root, "\\xff/r"));
  assert.match(kept, /^\.git\.latch-aside-[0-9a-f]{12}$/);
  assert.deepEqual(more, []);
  const was = bytes(fx.root, `\\xff/r/${kept}`);
  assert.ok(!readdirSync(was).includes("HEAD") && readdirSync(was).some((n) => n.startsWith("HEAD.latch-aside-")));
  assert.doesNotMatch(readFileSync(bytes(fx.root, `\\xff/r/${kept}/config`), "utf8"), /fsmonitor/);
  // No `git status` of the user's runs the model's command there now.
  assert.equal(existsSync(path.join(fx.root, "MARKER")), false);
  host.close();
});

test("a secret below a name that is not UTF-8 stops a contained process, which cannot mask it, until it is renamed", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-unnamed-secret-");
  fixtures.push(fx);
  mkdirSync(bytes(fx.root, "\\xff"));
  writeFileSync(bytes(fx.root, "\\xff/.env"), "KEY=SECRET-UNNAMED-ENV-u8\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const run = async () =>
    (await host.call("local_shell", {
      command: "node",
      args: ["-e", `process.stdout.write(require("fs").readFileSync(Buffer.from("\\xff/.env", "latin1")))`],
    })) as Out;
  const before = decisions(host).length;
  const out = await run();
  const text = JSON.stringify(out);
  assert.equal(out.status, "ok", text);
  assert.equal(out.result!.exit_code, 126, text); // not started: the sandbox's refusal on stderr
  assert.equal(out.result!.stdout, "");
  assert.ok(!text.includes("SECRET-UNNAMED-ENV-u8"), text);
  assert.match(String(out.result!.stderr), /cannot mask `\\xff\/\.env`/);
  assert.match(String(out.result!.stderr), /mv -- \$'\\xff' NEW_NAME/);
  assert.equal(decisions(host).length, before + 1, "the call is on the log");
  assert.ok(!JSON.stringify(outcomes(host.policyLog).at(-1)).includes("SECRET-UNNAMED-ENV-u8"));
  // Renamed as the message says: the process runs, and the secret is masked like any other.
  renameSync(bytes(fx.root, "\\xff"), path.join(fx.root, "renamed"));
  const again = (await host.call("local_shell", {
    command: "node",
    args: ["-e", `process.stdout.write(require("fs").readFileSync("renamed/.env"))`],
  })) as Out;
  assert.equal(again.status, "ok", JSON.stringify(again));
  assert.equal(again.result!.contained, true);
  assert.ok(!JSON.stringify(again).includes("SECRET-UNNAMED-ENV-u8"), JSON.stringify(again));
  assert.equal(readFileSync(path.join(fx.root, "renamed/.env"), "utf8"), "KEY=SECRET-UNNAMED-ENV-u8\n");
  host.close();
});

for (const kind of ["a repository", "an .envrc"] as const) {
  test(`${kind} below a name that is not UTF-8 stops a writable box, not a read-only one`, async () => {
    await requireSandbox();
    const fx = makeSandboxFixture("latch-unnamed-kept-");
    fixtures.push(fx);
    mkdirSync(bytes(fx.root, "\\xff"));
    // The user's own, there before the call: below a UTF-8 name the box would keep it read-only.
    const rel = kind === "an .envrc" ? "\\xff/.envrc" : "\\xff/r/.git/config";
    const shown = kind === "an .envrc" ? "\\xff/.envrc" : "\\xff/r/.git";
    if (kind === "an .envrc") writeFileSync(bytes(fx.root, rel), "echo the user's own\n");
    else execFileSync("sh", ["-c", "cd \"$(printf '\\377')\" && git init -q r"], { cwd: fx.root });
    const file = bytes(fx.root, rel);
    const was = readFileSync(file, "utf8");
    const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
    // Writable (node): the file could not be kept read-only, so nothing starts.
    const js = `require("fs").appendFileSync(Buffer.from(${JSON.stringify(rel.replace("\\xff", "\xff"))}, "latin1"), "[core]\\n\\tfsmonitor = touch MARKER\\n")`;
    const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
    assert.equal(out.result!.exit_code, 126, JSON.stringify(out));
    assert.ok(String(out.result!.stderr).includes(`cannot keep \`${shown}\` read-only`), String(out.result!.stderr));
    assert.equal(readFileSync(file, "utf8"), was);
    // Read-only (ls, the read-only tier): nothing there can be written, so it runs.
    const ls = (await host.call("local_shell", { command: "ls" })) as Out;
    assert.equal(ls.status, "ok", JSON.stringify(ls));
    assert.equal(ls.result!.contained, true);
    assert.equal(ls.result!.mode, "read-only");
    assert.equal(ls.result!.exit_code, 0, JSON.stringify(ls));
    assert.equal(readFileSync(file, "utf8"), was);
    host.close();
  });
}

test("the rename the refusal gives is a bash command that runs nothing a folder's name says", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-unnamed-quote-");
  fixtures.push(fx);
  // A contained process can name a folder so: the command pasted must rename it, and run nothing.
  const evil = "a'$(touch PWNED)'`touch PWNED2`";
  mkdirSync(Buffer.concat([bytes(fx.root, evil), Buffer.from("/\xff", "latin1")]), { recursive: true });
  writeFileSync(Buffer.concat([bytes(fx.root, evil), Buffer.from("/\xff/.env", "latin1")]), "KEY=SECRET-QUOTED-u8\n");
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  const out = (await host.call("local_shell", { command: "ls" })) as Out;
  assert.equal(out.result!.exit_code, 126, JSON.stringify(out));
  const command = /in bash: (mv -- \$'.*' NEW_NAME)\), then/.exec(String(out.result!.stderr))?.[1];
  assert.ok(command, String(out.result!.stderr));
  execFileSync("bash", ["-c", command], { cwd: fx.root });
  assert.equal(existsSync(path.join(fx.root, "PWNED")), false);
  assert.equal(existsSync(path.join(fx.root, "PWNED2")), false);
  assert.equal(readFileSync(path.join(fx.root, "NEW_NAME/.env"), "utf8"), "KEY=SECRET-QUOTED-u8\n");
  const again = (await host.call("local_shell", { command: "ls" })) as Out;
  assert.equal(again.result!.exit_code, 0, JSON.stringify(again));
  host.close();
});

test("a secret below a name that is not UTF-8 and past PATH_MAX stops a contained process", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-unnamed-deep-");
  fixtures.push(fx);
  // 17 folders of 250 characters below \xff: more than PATH_MAX (4,096) from the root, made by steps.
  execFileSync(
    "sh",
    [
      "-c",
      `cd "$(printf '\\377')" 2>/dev/null || { mkdir "$(printf '\\377')" && cd "$(printf '\\377')"; }; n=$(printf 'd%.0s' $(seq 250)); for i in $(seq 17); do mkdir "$n" && cd "$n"; done; echo KEY=SECRET-DEEP-u8 > .env`,
    ],
    { cwd: fx.root },
  );
  try {
    const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
    const js = `const fs=require("fs");process.chdir("/proc/self/fd/"+fs.openSync(Buffer.from("\xff","latin1"),"r"));const n="d".repeat(250);for(let i=0;i<17;i++)process.chdir(n);process.stdout.write(fs.readFileSync(".env"))`;
    const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
    const text = JSON.stringify(out);
    assert.ok(!text.includes("SECRET-DEEP-u8"), text);
    assert.equal(out.result!.exit_code, 126, text);
    assert.match(String(out.result!.stderr), /cannot look for secrets in `\\xff\/d+…` .*PATH_MAX/);
    host.close();
  } finally {
    execFileSync("rm", ["-rf", fx.root]); // GNU rm goes down by descriptors; Node's rmSync stops at PATH_MAX
  }
});

test("a link to a secret outside, below a name that is not UTF-8, stops a contained process, which cannot mount over it", async () => {
  await requireSandbox();
  const fx = makeSandboxFixture("latch-unnamed-link-");
  fixtures.push(fx);
  // The link's own name is plain; the mask goes where it leads, which no mount can name.
  const away = Buffer.concat([Buffer.from(fx.outside + "/"), Buffer.from([0xff])]);
  mkdirSync(away);
  writeFileSync(Buffer.concat([away, Buffer.from("/.env")]), "KEY=SECRET-LINKED-u8\n");
  symlinkSync(Buffer.concat([away, Buffer.from("/.env")]), path.join(fx.root, "notes.txt"));
  const host = await fx.host({ envelope: "auto_edit", approver: denyApprover });
  // Read without naming it (a named credential path is refused before any process starts).
  const js = `process.stdout.write(require("fs").readFileSync("no" + "tes.txt"))`;
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  const text = JSON.stringify(out);
  assert.ok(!text.includes("SECRET-LINKED-u8"), text);
  assert.equal(out.result!.exit_code, 126, text);
  assert.match(String(out.result!.stderr), /cannot mount `\.\.\/outside\/\\xff\/\.env`/);
  host.close();
});
