import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { BUILTIN_ENVELOPES } from "../../src/policy/builtin-envelopes.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { answering } from "./programs-helper.js";

const WRITE: Record<string, string> = {
  read_only: "deny",
  default: "approve",
  auto_edit: "allow",
  strict: "approve",
  ask_always: "approve",
};

describe("latch explain shows every gate's decision and reason", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  for (const name of Object.keys(BUILTIN_ENVELOPES)) {
    test(`under ${name}`, async () => {
      const r = await runCli([
        "explain",
        "write_file",
        '{"path":"e.txt","content":"x"}',
        "--envelope",
        name,
        "--root",
        fx.root,
        "--state-dir",
        fx.state,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const out = r.json as {
        decision: string;
        reason: string;
        gates: { gate: string; decision: string; reason: string }[];
      };
      assert.equal(out.decision, WRITE[name]);
      const gates = out.gates.map((g) => g.gate);
      assert.deepEqual(
        gates,
        WRITE[name] === "approve"
          ? ["registry", "toolset", "envelope", "approval"]
          : ["registry", "toolset", "envelope"],
      );
      for (const g of out.gates) assert.ok(g.reason.trim().length > 0, `${name}: ${g.gate} has no reason`);
      const env = out.gates[2];
      assert.equal(env.decision, WRITE[name]);
      assert.match(env.reason, new RegExp(`^envelope ${name}: files\\.write = ${WRITE[name]} for write_file$`));
      if (WRITE[name] === "approve") assert.match(out.gates[3].reason, /would be refused: no approver is available/);
      assert.equal(existsSync(path.join(fx.root, "e.txt")), false, "explain runs nothing");
    });
  }

  test("with a policy program and a posture: each program's answer and the posture are in the trail", async () => {
    const abstain = answering(fx.base, "abstain", { decision: "abstain", reason: "not mine to judge" });
    const r = await runCli([
      "explain",
      "read_file",
      '{"path":"a.txt"}',
      "--policy",
      abstain,
      "--default-authorization",
      "deny-unless-allowed",
      "--policy-log",
      path.join(fx.base, "x.jsonl"),
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = r.json as { decision: string; gates: { gate: string; decision: string; reason: string }[] };
    assert.deepEqual(
      out.gates.map((g) => [g.gate, g.decision]),
      [
        ["registry", "allow"],
        ["toolset", "allow"],
        ["envelope", "allow"],
        ["policy", "abstain"],
        ["posture", "deny"],
      ],
    );
    assert.match(out.gates[3].reason, /not mine to judge/);
    assert.equal(out.decision, "deny");
    const bad = await runCli([
      "explain",
      "read_file",
      '{"path":"a.txt"}',
      "--policy",
      abstain,
      "--default-authorization",
      "maybe",
      "--policy-log",
      path.join(fx.base, "y.jsonl"),
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
    ]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /Expected `--default-authorization` to be allow-unless-forbidden or deny-unless-allowed, got `maybe`/,
    );
    const noLog = await runCli([
      "explain",
      "read_file",
      '{"path":"a.txt"}',
      "--policy",
      abstain,
      "--default-authorization",
      "allow-unless-forbidden",
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
    ]);
    assert.equal(noLog.code, 2);
    assert.match(noLog.stderr, /needs a fresh --policy-log/);
  });

  test("the shell tiers through the real local_shell planner", async () => {
    const host = await fx.host({ envelope: "default" });
    assert.ok(
      host.tools().some((x) => x.name === "local_shell"),
      "local_shell is offered",
    );
    const cases: [string, string, RegExp][] = [
      ["ls -la", "allow", /prefix_allowlist/],
      ["git status -s", "allow", /prefix_allowlist/],
      ["git statusx", "approve", /shell = approve/],
      ["ls; rm x", "approve", /shell = approve/],
      ["nice -n 5 rm x", "approve", /shell = approve/],
    ];
    for (const [line, want, why] of cases) {
      const ex = await host.explain("local_shell", { command: line });
      assert.equal(ex.decision, want, line);
      assert.match(ex.reason, why, line);
    }
    const blk = await fx.host({ envelope: "ask_always" });
    assert.equal((await blk.explain("local_shell", { command: "ls" })).decision, "approve");
    const ro = await fx.host({ envelope: "read_only" });
    assert.equal((await ro.explain("local_shell", { command: "ls" })).decision, "deny");
  });
});
