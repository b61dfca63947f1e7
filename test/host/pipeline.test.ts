import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";

describe("the call path", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("a policy hook that denies stops the call before anything runs", async () => {
    let consulted = 0;
    const host = await fx.host({
      policies: [
        (req) => {
          consulted++;
          assert.equal(req.tool, "write_file");
          assert.equal(req.plan.paths?.[0].rel, "new.txt");
          return { action: "deny", reason: "writes are off today", gate: "policy" };
        },
      ],
    });
    const out = await host.call("write_file", { path: "new.txt", content: "x" });
    assert.equal(consulted, 1);
    assert.deepEqual(out, { status: "refused", reason: "writes are off today", hint: "This is a policy decision: do not retry the same call.", gate: "policy" });
    assert.equal(existsSync(path.join(fx.root, "new.txt")), false);
  });

  test("a hook that throws, or answers nonsense, blocks the call (fail closed)", async () => {
    const throwing = await fx.host({ policies: [() => { throw new Error("boom"); }] });
    const a = await throwing.call("write_file", { path: "t1.txt", content: "x" });
    assert.equal(a.status, "refused");
    assert.match((a as { reason: string }).reason, /policy hook failed.*boom/);
    const nonsense = await fx.host({ policies: [() => ({ action: "yes" as never, reason: "", gate: "policy" })] });
    const b = await nonsense.call("write_file", { path: "t2.txt", content: "x" });
    assert.equal(b.status, "refused");
    assert.equal(existsSync(path.join(fx.root, "t1.txt")) || existsSync(path.join(fx.root, "t2.txt")), false);
  });

  test("approve with no approver is a refusal, and nothing is written", async () => {
    const host = await fx.host({ policies: [() => ({ action: "approve", reason: "writes need a person", gate: "envelope" })] });
    const out = await host.call("write_file", { path: "t3.txt", content: "x" });
    assert.equal(out.status, "refused");
    assert.equal((out as { gate: string }).gate, "approval");
    assert.equal(existsSync(path.join(fx.root, "t3.txt")), false);
  });

  test("the strictest decision wins, and explain shows every gate in order", async () => {
    const host = await fx.host({
      policies: [
        () => ({ action: "allow", reason: "fine by me", gate: "policy" }),
        () => ({ action: "approve", reason: "ask first", gate: "envelope" }),
      ],
    });
    const ex = await host.explain("write_file", { path: "t4.txt", content: "x" });
    assert.equal(ex.decision, "approve");
    assert.equal(ex.reason, "ask first");
    assert.deepEqual(ex.gates.map((g) => [g.gate, g.action]), [["registry", "allow"], ["toolset", "allow"], ["policy", "allow"], ["envelope", "approve"]]);
    assert.equal(existsSync(path.join(fx.root, "t4.txt")), false);
  });

  test("unknown tools and unknown argument keys are errors that name the fix", async () => {
    const host = await fx.host();
    const a = await host.call("rm_rf", {});
    assert.equal(a.status, "error");
    assert.match((a as { message: string }).message, /does not exist.*read_file/);
    const b = await host.call("read_file", { path: "x", lines: 3 });
    assert.deepEqual(b, { status: "error", code: "EINVAL", message: "Unknown argument `lines` for read_file; it accepts: path, start_line, end_line, force, anchors." });
    const c = await host.call("read_file_range", { path: "x", start_line: -1 });
    assert.equal((c as { message: string }).message, "Expected `start_line` to be at least 1, got `-1`.");
  });

  test("aliases reach the same tool", async () => {
    fx.write({ "alias.txt": "one\n" });
    const host = await fx.host();
    const out = await host.call("read", { path: "alias.txt" });
    assert.equal(out.status, "ok");
    assert.equal((out as { result: { content: string } }).result.content, readFileSync(path.join(fx.root, "alias.txt"), "utf8"));
  });
});
