// A writable box masks each workspace secret where the walk finds it, and the walk does not enter
// `node_modules` or a folder named `.git`. A mask covers the file, not the folders above it: a contained
// process could rename a folder that holds a `.env` into `node_modules/` (or into a folder named `.git`)
// in one call, and the next call, whose walk no longer found it, read it. Tried for real here: each
// folder on the way to a masked path is a mount point of its own in a writable box, so it cannot be
// renamed (EBUSY), and the secret stays where the walk finds it. Each test checks the output, the disk
// (every secret where it was, byte for byte) and the policy log.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
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

const SECRET_FILES: Record<string, string> = {
  "services/api/.env": "KEY=SECRET-MOVED-NESTED-m58\n",
  "services/web/config/.env.local": "KEY=SECRET-MOVED-DEEP-m58\n",
  "deploy/keys/.ssh/id_ed25519": "KEY SECRET-MOVED-SSH-m58\n",
  "ops/denied/token.txt": "KEY SECRET-MOVED-DENIED-m58\n",
};

type Out = { status: string; reason?: string; result?: Record<string, unknown> };

let fx: SandboxFixture;
let host: Host;

/** Runs `command` contained, in a writable box, with no question; returns its output (stdout, stderr). */
async function run(command: string): Promise<string> {
  const before = decisions(host).length;
  const out = (await host.call("local_shell", { command })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true, JSON.stringify(out.result));
  const log = decisions(host);
  assert.equal(log.length, before + 1, "the call's decision is logged");
  assert.equal(log.at(-1)!.final, "allow");
  assert.deepEqual(log.at(-1)!.sandbox, { contained: true, mode: "workspace-write", network: false });
  return `${String(out.result!.stdout)}\n${String(out.result!.stderr)}`;
}

function assertNoSecret(text: string): void {
  for (const s of SECRET_BYTES) assert.ok(!text.includes(s), `${s} leaked: ${text}`);
}

/** Each case has a tree of its own (`t0/`, `t1/`, …), so that a rename that went through spoils no other. */
const TREES = 9;
const trees = Array.from({ length: TREES }, (_, i) => `t${i}`);
/**
 * A tree's own secret values: the disclosure gate redacts the values of the secrets the walk found, so
 * a moved secret whose value another tree also holds would be redacted by that other copy, not stopped.
 */
const secretIn = (tree: string, rel: string) => `${SECRET_FILES[rel].trimEnd()}-${tree}\n`;
const SECRET_BYTES = trees.flatMap((t) =>
  Object.keys(SECRET_FILES).map((rel) => secretIn(t, rel).trim().split(/[= ]/)[1]),
);

function assertSecretsInPlace(): void {
  for (const t of trees)
    for (const rel of Object.keys(SECRET_FILES))
      assert.equal(readFileSync(path.join(fx.root, t, rel), "utf8"), secretIn(t, rel), `${t}/${rel} is where it was`);
  assert.deepEqual(markedProcesses(), [], "no process of any run is left");
}

describe("a contained process cannot move a secret where the next walk does not look", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-secret-moved-");
    for (const t of trees) {
      for (const rel of Object.keys(SECRET_FILES)) fx.write(`${t}/${rel}`, secretIn(t, rel));
      fx.write(`${t}/services/api/server.js`, "// public\n");
      fx.write(`${t}/node_modules/.keep`, "");
    }
    host = await fx.host({
      envelope: "mine",
      config: {
        toolsPolicies: { local_shell: { _containment: "required" } },
        agents: {},
        envelopes: {
          mine: { extends: "auto_edit", files: { read: { grant: "allow", deny_paths: ["**/ops/denied/**"] } } },
        },
      },
    });
  });
  after(() => fx?.cleanup());

  const cases = [
    [
      "a folder holding a .env, into node_modules",
      "mv services node_modules/services",
      "node_modules/services/api/.env",
    ],
    ["the .env's own folder, into node_modules", "mv services/api node_modules/api", "node_modules/api/.env"],
    ["a folder deeper down, into node_modules", "mv services/web/config node_modules/c", "node_modules/c/.env.local"],
    [
      "a folder holding a .ssh folder, into node_modules",
      "mv deploy/keys node_modules/k",
      "node_modules/k/.ssh/id_ed25519",
    ],
    [
      "a folder holding a denied path, into node_modules",
      "mv ops node_modules/ops",
      "node_modules/ops/denied/token.txt",
    ],
    ["a folder holding a .env, into a folder named .git", "mkdir -p x && mv services x/.git", "x/.git/api/.env"],
    ["a folder renamed to node_modules itself", "mv services/api services/node_modules", "services/node_modules/.env"],
    [
      "a folder holding a .env, into a virtual environment's site-packages",
      "mkdir -p .venv/lib/site-packages && mv services .venv/lib/site-packages/s",
      ".venv/lib/site-packages/s/api/.env",
    ],
  ] as const;
  for (const [i, [what, move, read]] of cases.entries()) {
    test(`${what}: the rename fails, and the next call reads no secret`, async () => {
      const tree = trees[i];
      // A script, so the planner sees no secret's name: the box's mounts are what stop it.
      const first = await run(
        `node -e 'const c = require("child_process"); try { c.execSync(${JSON.stringify(move)}, { cwd: "${tree}", stdio: "inherit" }); console.log("MOVED") } catch { console.log("NOT-MOVED") }'`,
      );
      const second = await run(
        `node -e 'try { console.log([...require("fs").readFileSync(Buffer.from("${Buffer.from(`${tree}/${read}`).toString("hex")}", "hex").toString(), "utf8")].reverse().join("")) } catch (e) { console.log(e.code) }'`,
      );
      // Printed backwards, so that the disclosure gate (which redacts the values of the secrets it has
      // seen) cannot be what stops it: the box must.
      assertNoSecret([...second].reverse().join(""));
      assert.match(first, /NOT-MOVED/, `the rename must fail: ${first}`);
      // EBUSY, or EXDEV for a folder moved whole, where mv then copies and cannot copy a mask.
      assert.match(first, /busy|cannot create special file/i, `the reason is the mount point: ${first}`);
      assert.equal(existsSync(path.join(fx.root, tree, read)), false);
      assertSecretsInPlace();
    });
  }

  test("what holds no secret still renames as before, and the secrets stay masked for the renamed tree", async () => {
    const text = await run(
      `cd ${trees[TREES - 1]} && mv services/api/server.js node_modules/server.js && mkdir -p a/b && mv a a2 && ls node_modules a2 && grep -r KEY services; echo DONE`,
    );
    assert.match(text, /server\.js/);
    assert.match(text, /DONE/);
    assertNoSecret(text);
    assert.equal(readFileSync(path.join(fx.root, trees[TREES - 1], "node_modules/server.js"), "utf8"), "// public\n");
    assertSecretsInPlace();
  });
  test("a rename that fails so says why in the result, not only EBUSY", async () => {
    const out = (await host.call("local_shell", {
      command: "node",
      args: [
        "-e",
        `require("child_process").execSync("mv ${trees[TREES - 1]}/services ${trees[TREES - 1]}/s2", { stdio: "inherit" })`,
      ],
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.notEqual(out.result!.exit_code, 0);
    assert.match(String(out.result!.stderr), /busy/i);
    assert.match(String(out.result!.sandbox_note), /every folder above a secret.* is a mount point/);
    assertSecretsInPlace();
    // A run that fails for another reason carries no such note, even one that names the code (review h2).
    for (const js of ["process.exit(3)", "console.error('test: retry on EBUSY from fs.rm'); process.exit(1)"]) {
      const other = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
      assert.notEqual(other.result!.exit_code, 0);
      assert.equal(other.result!.sandbox_note, undefined, js);
    }
  });
});

test("more masks than bwrap takes arguments for: a clear refusal that says what to do, not bwrap's one line", async () => {
  await requireSandbox();
  const many = makeSandboxFixture("latch-secret-many-");
  try {
    // 1,600 folders with a .env each: a mask and a folder kept in place each, six arguments a secret.
    for (let i = 0; i < 1600; i++) many.write(`p${i}/.env`, `KEY=many-${i}\n`);
    const h = await many.host();
    const out = (await h.call("local_shell", { command: "node", args: ["-e", "console.log('RAN')"] })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.exit_code, 126, JSON.stringify(out.result));
    assert.doesNotMatch(String(out.result!.stdout), /RAN/);
    assert.match(
      String(out.result!.stderr),
      /cannot start the sandbox: the workspace has 1600 secrets, 0 paths the envelope denies and 0 folders latch cannot read/,
    );
    assert.match(String(out.result!.stderr), /Gather test keys and certificates into fewer folders/);
    assert.doesNotMatch(String(out.result!.stderr), /Exceeded maximum number of arguments/);
    h.close();
  } finally {
    many.cleanup();
  }
});
