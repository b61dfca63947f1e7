import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { yesApprover, type Approver } from "../../src/approval/approver.js";
import { expectError, expectOk, expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";
import type { Host } from "../../src/host/create-host.js";
import { answering } from "../policy/programs-helper.js";

/** The host's policy log, closed: the refused call's decision is there with its gate, and no outcome follows it. */
function loggedRefusal(host: Host, tool: string, gate: string): void {
  host.close();
  const records = readFileSync(host.policyLog, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => (JSON.parse(l) as { record: Record<string, unknown> }).record);
  const d = records.find((r) => r.type === "effect_decision" && r.tool === tool);
  assert.ok(d, `no decision for ${tool} in the log`);
  assert.equal(d.final, "deny");
  assert.ok(
    (d.gates as { gate: string }[]).some((g) => g.gate === gate),
    JSON.stringify(d.gates),
  );
  assert.equal(records.filter((r) => r.type === "effect_outcome" && r.effect_id === d.effect_id).length, 0);
}

describe("the call path", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("an envelope that denies stops the call before anything runs", async () => {
    const host = await fx.host({ envelope: "read_only" });
    const out = expectRefused(await host.call("write_file", { path: "new.txt", content: "x" }));
    assert.deepEqual(
      { ...out, reason: undefined },
      {
        status: "refused",
        reason: undefined,
        hint: "This is a policy decision: do not retry the same call.",
        gate: "envelope",
      },
    );
    assert.match(out.reason, /envelope read_only: files\.write = deny/);
    assert.equal(existsSync(path.join(fx.root, "new.txt")), false);
    loggedRefusal(host, "write_file", "envelope");
  });

  test("a policy program sees the plan and its deny blocks the call", async () => {
    const prog = answering(fx.base, "no-writes", { decision: "deny", reason: "writes are off today" });
    const host = await fx.host({ policyPrograms: [prog] });
    const out = expectRefused(await host.call("write_file", { path: "t0.txt", content: "x" }), "policy");
    assert.match(out.reason, /writes are off today/);
    assert.equal(existsSync(path.join(fx.root, "t0.txt")), false);
    loggedRefusal(host, "write_file", "policy");
  });

  test("approve with no approver is a refusal, and nothing is written", async () => {
    const host = await fx.host({ envelope: "strict" });
    const out = expectRefused(await host.call("write_file", { path: "t3.txt", content: "x" }), "approval");
    assert.match(out.reason, /needs a person's approval.*no approver/);
    assert.equal(existsSync(path.join(fx.root, "t3.txt")), false);
    loggedRefusal(host, "write_file", "approval");
  });

  test("a call's own approver wins over the host's, and sees the reason and the diff", async () => {
    const seen: unknown[] = [];
    const asking: Approver = {
      name: "test",
      request: async (req) => (seen.push(req), { approved: true, by: "the test" }),
    };
    const host = await fx.host({
      envelope: "strict",
      approver: { name: "never", request: async () => ({ approved: false, by: "host" }) },
    });
    const out = await host.call("write_file", { path: "t5.txt", content: "one\ntwo\n" }, { approver: asking });
    assert.equal(out.status, "ok");
    assert.equal(readFileSync(path.join(fx.root, "t5.txt"), "utf8"), "one\ntwo\n");
    const req = seen[0] as { tool: string; reason: string; diff: string; args: unknown };
    assert.equal(req.tool, "write_file");
    assert.match(req.reason, /envelope strict: files\.write = approve/);
    assert.equal(req.diff, "--- /dev/null\n+++ b/t5.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n");
    assert.deepEqual(req.args, { path: "t5.txt", content: "one\ntwo\n" });
  });

  test("the strictest decision wins, and explain shows every gate in order", async () => {
    const prog = answering(fx.base, "fine", { decision: "allow", reason: "fine by me" });
    const host = await fx.host({ envelope: "default", policyPrograms: [prog], approver: yesApprover });
    const ex = await host.explain("write_file", { path: "t4.txt", content: "x" });
    assert.equal(ex.decision, "approve");
    assert.match(ex.reason, /envelope default: files\.write = approve/);
    assert.deepEqual(
      ex.gates.map((g) => [g.gate, g.action]),
      [
        ["registry", "allow"],
        ["toolset", "allow"],
        ["envelope", "approve"],
        ["policy", "allow"],
        ["approval", "approve"],
      ],
    );
    assert.equal(existsSync(path.join(fx.root, "t4.txt")), false);
  });

  test("unknown tools and unknown argument keys are errors that name the fix", async () => {
    const host = await fx.host();
    const a = expectError(await host.call("rm_rf", {}));
    assert.match(a.message, /does not exist.*read_file/);
    const b = expectError(await host.call("read_file", { path: "x", lines: 3 }));
    assert.match(b.message, /^Unknown argument `lines` for read_file; it accepts: path, /);
    // A negative start_line counts from the end; 0 is the one value that is no line at all.
    const c = expectError(await host.call("read_file_range", { path: "x", start_line: 0 }));
    assert.match(c.message, /start_line is 1-based \(or negative, counting from the end\); 0 is not a line/);
  });

  test("the output backstop lets both capped shell streams through whole, tails included", async () => {
    const host = await fx.host({ approver: { name: "yes", request: async () => ({ approved: true, by: "test" }) } });
    const script = "i=0; while [ $i -lt 12000 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); done";
    const out = await host.call("local_shell", { command: "sh", args: ["-c", script] });
    const r = expectOk<{ stdout: string; stderr: string }>(out).result;
    assert.ok(r.stdout.trimEnd().endsWith("out-11999"), r.stdout.slice(-200));
    assert.ok(r.stderr.trimEnd().endsWith("err-11999"), r.stderr.slice(-200));
    assert.doesNotMatch(JSON.stringify(r), /cut by latch's output limit/);
  });

  test("latch's own cd needs no allowlist entry: `cd src && ls` is allowed by the default envelope", async () => {
    fx.write({ "src/x.ts": "x\n" });
    const host = await fx.host({ envelope: "default" });
    const ex = await host.explain("local_shell", { command: "cd src && ls" });
    assert.equal(ex.decision, "allow", JSON.stringify(ex.gates));
    const out = expectOk<{ stdout: string }>(await host.call("local_shell", { command: "cd src && ls" }));
    assert.match(out.result.stdout, /x\.ts/);
    assert.equal((await host.explain("local_shell", { command: "cd src && rm x.ts" })).decision, "approve");
  });

  test("aliases reach the same tool", async () => {
    fx.write({ "alias.txt": "one\n" });
    const host = await fx.host();
    const out = expectOk<{ content: string }>(await host.call("read", { path: "alias.txt" }));
    assert.equal(out.result.content, readFileSync(path.join(fx.root, "alias.txt"), "utf8"));
  });
});
