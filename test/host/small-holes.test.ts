// Issue 13, point 8: the smaller holes, each tried as an attacker would.
// - the state database and its folder are readable by their owner only (0600 / 0700), a wider
//   existing folder included;
// - a child process does not inherit secrets by name (tokens, keys, passwords, DATABASE_URL,
//   SSH_AUTH_SOCK …), unless `_env_allow` keeps one;
// - a write to a file with another hard link is refused, and the other path is unchanged;
// - calls refused before planning (an unknown tool, bad arguments) are in the policy log.
import assert from "node:assert/strict";
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import { expectOk, expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

const records = (log: string) =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l).record);

describe("smaller holes", () => {
  test("another user cannot read the read ledger or the approval queue: latch.db 0600, its folder 0700, even when it was wider", async () => {
    const state = path.join(fx.base, "wide-state");
    mkdirSync(state, { mode: 0o755 });
    chmodSync(state, 0o755);
    fx.write({ "m.txt": "x\n" });
    const h = await fx.host({ stateDir: state });
    assert.equal((await h.call("read_file", { path: "m.txt" })).status, "ok");
    assert.equal(statSync(state).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(state, "latch.db")).mode & 0o777, 0o600);
    // WAL: with the host open both side files exist, and they hold the same rows as latch.db.
    for (const side of ["latch.db-wal", "latch.db-shm"])
      assert.equal(statSync(path.join(state, side)).mode & 0o777, 0o600, side);
    assert.equal(statSync(path.join(state, "locks")).mode & 0o777, 0o700);
  });

  test("a shell child does not see GH_PAT, GITHUB_TOKEN, DATABASE_URL, SSH_AUTH_SOCK, *_API_KEY, *PASSWORD; _env_allow keeps one", async () => {
    const secrets: Record<string, string> = {
      GH_PAT: "leak-pat",
      GITHUB_TOKEN: "leak-token",
      DATABASE_URL: "postgres://u:leak-db@h/d",
      SSH_AUTH_SOCK: "/tmp/leak-agent.sock",
      OPENAI_API_KEY: "leak-key",
      DB_PASSWORD: "leak-password",
      NPM_CONFIG__AUTH: "leak-auth",
      AWS_SECRET_ACCESS_KEY: "leak-aws",
      APP_CREDENTIALS: "leak-cred",
      KEEP_PASSPHRASE: "kept-on-purpose",
    };
    const h = await fx.host({
      approver: yesApprover,
      env: { PATH: process.env.PATH ?? "", HOME: fx.base, PYTHONPATH: "/opt/py", LANG: "C", ...secrets },
      // Uncontained (the sandbox passes a short list of names anyway): the filter is what stands here.
      config: {
        toolsPolicies: { local_shell: { _env_allow: "KEEP_PASSPHRASE", _containment: "off" } },
        agents: {},
      },
    });
    const out = JSON.stringify(expectOk(await h.call("local_shell", { command: "env" })).result);
    assert.doesNotMatch(out, /leak-/);
    for (const name of Object.keys(secrets).filter((n) => n !== "KEEP_PASSPHRASE"))
      assert.doesNotMatch(out, new RegExp(`\\b${name}=`), name);
    assert.match(out, /KEEP_PASSPHRASE=kept-on-purpose/, "the allowlist keeps a name a pattern would drop");
    assert.match(out, /PYTHONPATH=\/opt\/py/, "search paths stay (*PAT* would match them)");
  });

  test("a read or write of a file with a second hard link is refused; the other path is unchanged", async () => {
    fx.write({ "hl/a.txt": "original\n" });
    mkdirSync(path.join(fx.base, "elsewhere"), { recursive: true });
    const other = path.join(fx.base, "elsewhere", "b.txt"); // outside the root
    linkSync(path.join(fx.root, "hl/a.txt"), other);
    const h = await fx.host();
    // Reads are refused too (issue 26): the link may be to a file outside the workspace.
    assert.match(expectRefused(await h.call("read_file", { path: "hl/a.txt" })).reason, /2 hard links/);
    for (const [tool, args] of [
      ["write_file", { path: "hl/a.txt", content: "changed\n" }],
      ["edit_file", { path: "hl/a.txt", old_string: "original", new_string: "changed" }],
      ["sed", { path: "hl/a.txt", pattern: "original", replacement: "changed" }],
    ] as const) {
      assert.match(expectRefused(await h.call(tool, args)).reason, /2 hard links/, tool);
    }
    assert.equal(readFileSync(other, "utf8"), "original\n");
    assert.equal(readFileSync(path.join(fx.root, "hl/a.txt"), "utf8"), "original\n");
    assert.equal(statSync(other).nlink, 2, "the link is intact");
  });

  test("an unknown tool and bad arguments are refused and logged, with the name tried", async () => {
    const log = path.join(fx.base, "probe.jsonl");
    const h = await fx.host({ policyLog: log });
    assert.equal((await h.call("exfiltrate_everything", { path: "/" })).status, "error");
    assert.equal((await h.call("read_file", { path: "m.txt", sneaky: true })).status, "error");
    h.close();
    const denied = records(log).filter((r) => r.type === "effect_decision");
    assert.deepEqual(
      denied.map((r) => [r.tool, r.final]),
      [
        ["exfiltrate_everything", "deny"],
        ["read_file", "deny"],
      ],
    );
    assert.match(denied[0].reason, /EUNKNOWNTOOL/);
    assert.match(denied[1].reason, /EINVAL/);
  });
});
