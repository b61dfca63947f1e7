import assert from "node:assert/strict";
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { parseAnswer } from "../../src/policy/programs.js";
import { makeFixture } from "../helpers/fixture.js";
import { answering, writeProgram } from "./programs-helper.js";
import { expectRefused } from "../helpers/expect.js";

/** Gone, or a zombie waiting for its reaper (killed, not yet collected): either way not running. */
function isRunning(pid: number): boolean {
  try {
    const st = readFileSync(`/proc/${pid}/status`, "utf8");
    return !/^State:\s+Z/m.test(st);
  } catch {
    return false;
  }
}

describe("policy programs", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  let n = 0;

  /** Run one write_file through a host with `prog`; return the result and whether the file exists. */
  async function tryWrite(prog: string, extra = {}) {
    const rel = `out-${++n}.txt`;
    const host = await fx.host({ policyPrograms: [prog], ...extra });
    const out = await host.call("write_file", { path: rel, content: "x\n" });
    host.close();
    return {
      out: out as { status: string; reason?: string; gate?: string },
      written: existsSync(path.join(fx.root, rel)),
    };
  }

  const failures: [string, string, RegExp][] = [
    ["crashes", `process.exit(3);`, /exited with status 3/],
    ["is killed by a signal", `process.kill(process.pid, "SIGKILL");`, /exited with signal SIGKILL/],
    ["hangs", `setInterval(() => {}, 1000);`, /did not answer within 2 s/],
    ["prints garbage", `process.stdout.write("sure, go ahead");`, /not JSON/],
    [
      "gives an empty reason",
      `process.stdout.write(JSON.stringify({ decision: "allow", reason: "  " }));`,
      /gave no reason/,
    ],
    ["gives no reason at all", `process.stdout.write(JSON.stringify({ decision: "allow" }));`, /gave no reason/],
    [
      "gives conflicting fields",
      `process.stdout.write(JSON.stringify({ decision: "allow", allow: false, reason: "both" }));`,
      /conflicting fields/,
    ],
    [
      "gives an unknown decision",
      `process.stdout.write(JSON.stringify({ decision: "maybe", reason: "hm" }));`,
      /not allow, deny or abstain/,
    ],
    ["prints a JSON array", `process.stdout.write("[]");`, /not an object/],
  ];
  for (const [what, body, why] of failures) {
    test(`a program that ${what} blocks the call, and nothing runs`, async () => {
      const { out, written } = await tryWrite(writeProgram(fx.base, `p-${what.replace(/\W+/g, "-")}`, body));
      assert.equal(out.status, "refused");
      assert.equal(out.gate, "policy");
      assert.match(out.reason!, why);
      assert.match(out.reason!, /so the call is blocked/);
      assert.equal(written, false);
    });
  }

  /**
   * Run a write through a program that starts a child (its command line carrying `token`; in a
   * session of its own with `leave`), then hangs: the call is blocked for the timeout. The child's pid.
   */
  async function hangWithChild(name: string, token: string, leave: boolean): Promise<number> {
    const pidFile = path.join(fx.base, `${name}.pid`);
    const prog = writeProgram(
      fx.base,
      name,
      `const c = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ${JSON.stringify(token)}], { stdio: "ignore", detached: ${leave} });
       require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));
       setInterval(() => {}, 1000);`.replace(/require/g, "process.getBuiltinModule"),
    );
    const { out, written } = await tryWrite(prog);
    assert.match(out.reason!, /did not answer/);
    assert.equal(written, false);
    return Number(readFileSync(pidFile, "utf8"));
  }

  /** The process table: the running processes whose command line carries `token`. */
  function runningWith(token: string): number[] {
    return readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d) && isRunning(Number(d)))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(token);
        } catch {
          return false;
        }
      })
      .map(Number);
  }

  test("a hung program's whole process group is killed (a child it started does not survive)", async () => {
    const pid = await hangWithChild("spawner", `latch-grandchild-${process.pid}`, false);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!isRunning(pid), `the grandchild ${pid} still runs`);
  });

  test("a hung program's child that left its session (setsid) is killed too: no process of it is left", async () => {
    const token = `latch-escapee-${process.pid}-${Date.now()}`;
    const pid = await hangWithChild("session-leaver", token, true);
    const left = runningWith(token);
    try {
      assert.deepEqual(left, [], `the escapee ${pid} still runs`);
    } finally {
      for (const p of left) process.kill(p, "SIGKILL");
    }
  });

  test("the program gets {effect, tool, request, session} on stdin and a cleared environment", async () => {
    const seen = path.join(fx.base, "seen.json");
    const prog = writeProgram(
      fx.base,
      "recorder",
      `process.getBuiltinModule("node:fs").writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ input, env: process.env }));
       process.stdout.write(JSON.stringify({ decision: "abstain", reason: "just looking" }));`,
    );
    process.env.LATCH_TEST_SECRET = "do-not-pass";
    try {
      const { out } = await tryWrite(prog, {
        posture: "allow-unless-forbidden",
        policyLog: path.join(fx.base, "rec.jsonl"),
      });
      assert.equal(out.status, "ok");
    } finally {
      delete process.env.LATCH_TEST_SECRET;
    }
    const got = JSON.parse(readFileSync(seen, "utf8"));
    assert.deepEqual(Object.keys(got.input).sort(), ["effect", "request", "session", "tool"]);
    assert.equal(got.input.tool, "write_file");
    assert.deepEqual(got.input.request, { path: `out-${n}.txt`, content: "x\n" });
    assert.equal(got.input.effect.axis, "files.write");
    assert.deepEqual(got.input.effect.paths, [`out-${n}.txt`]);
    assert.equal(got.input.effect.envelope.action, "allow");
    assert.equal(got.env.LATCH_TEST_SECRET, undefined);
    assert.equal(got.env.PATH, undefined);
  });

  test("the legacy {allow, reason} answer is accepted", async () => {
    assert.equal(
      (await tryWrite(answering(fx.base, "legacy-no", { allow: false, reason: "legacy says no" }))).out.status,
      "refused",
    );
    const yes = await tryWrite(answering(fx.base, "legacy-yes", { allow: true, reason: "legacy says yes" }));
    assert.equal(yes.out.status, "ok");
    assert.equal(yes.written, true);
  });

  test("deny beats approve beats allow: a program's allow does not lift the envelope's approve", async () => {
    const allow = answering(fx.base, "allow-all", { decision: "allow", reason: "fine" });
    const r = await tryWrite(allow, { envelope: "default" });
    assert.equal(r.out.gate, "approval");
    assert.equal(r.written, false);
    // an explicit deny beats the envelope's allow and another program's allow
    const deny = answering(fx.base, "deny-all", { decision: "deny", reason: "no" });
    const host = await fx.host({ policyPrograms: [allow, deny] });
    const out = await host.call("write_file", { path: "both.txt", content: "x" });
    host.close();
    assert.equal(out.status, "refused");
    assert.equal(existsSync(path.join(fx.root, "both.txt")), false);
  });

  test("posture settles abstentions: deny-unless-allowed (default) blocks, allow-unless-forbidden defers to the envelope", async () => {
    const abstain = answering(fx.base, "abstainer", { decision: "abstain", reason: "no opinion" });
    const strict = await tryWrite(abstain);
    assert.equal(strict.out.status, "refused");
    assert.equal(strict.out.gate, "posture");
    assert.match(strict.out.reason!, /deny-unless-allowed/);
    assert.equal(strict.written, false);
    const lenient = await tryWrite(abstain, {
      posture: "allow-unless-forbidden",
      policyLog: path.join(fx.base, "lenient.jsonl"),
    });
    assert.equal(lenient.out.status, "ok");
    assert.equal(lenient.written, true);
    // one allow among abstentions allows
    const mixed = await tryWrite(abstain, {
      policyPrograms: [abstain, answering(fx.base, "one-yes", { decision: "allow", reason: "mine" })],
    });
    assert.equal(mixed.out.status, "ok");
    // the posture never lifts the toolset gate
    const host = await fx.host({
      policyPrograms: [abstain],
      posture: "allow-unless-forbidden",
      policyLog: path.join(fx.base, "tg.jsonl"),
    });
    const out = await host.call("write_file", { path: "../escape.txt", content: "x" });
    host.close();
    assert.equal(expectRefused(out).gate, "toolset");
    assert.equal(existsSync(path.join(fx.base, "escape.txt")), false);
  });

  test("a posture needs programs and an explicit policy log", async () => {
    await assert.rejects(
      fx.host({ posture: "allow-unless-forbidden", policyLog: path.join(fx.base, "np.jsonl") }),
      /needs at least one policy program/,
    );
    await assert.rejects(
      fx.host({
        posture: "deny-unless-allowed",
        policyPrograms: [answering(fx.base, "x", { decision: "allow", reason: "r" })],
      }),
      /needs a fresh --policy-log/,
    );
  });

  test("a program changed on disk mid-run blocks calls until restart", async () => {
    const prog = answering(fx.base, "mutable", { decision: "allow", reason: "ok" });
    const host = await fx.host({ policyPrograms: [prog] });
    assert.equal((await host.call("write_file", { path: "m1.txt", content: "x" })).status, "ok");
    appendFileSync(prog, "\n// changed\n");
    const out = await host.call("write_file", { path: "m2.txt", content: "x" });
    assert.match(expectRefused(out).reason, /changed on disk since latch started/);
    assert.equal(existsSync(path.join(fx.root, "m2.txt")), false);
    host.close();
    // a restarted host pins the new version
    const fresh = await fx.host({ policyPrograms: [prog] });
    assert.equal((await fresh.call("write_file", { path: "m2.txt", content: "x" })).status, "ok");
    fresh.close();
  });

  test("a missing or non-executable program stops startup", async () => {
    await assert.rejects(fx.host({ policyPrograms: [path.join(fx.base, "nope")] }), /cannot be used \(ENOENT\)/);
  });

  test("parseAnswer", () => {
    assert.deepEqual(parseAnswer('{"decision":"deny","reason":" r "}'), { decision: "deny", reason: "r" });
    assert.deepEqual(parseAnswer('{"decision":"allow","allow":true,"reason":"agree"}'), {
      decision: "allow",
      reason: "agree",
    });
    assert.match(parseAnswer('{"allow":"yes","reason":"r"}') as string, /not true or false/);
    assert.match(parseAnswer('{"reason":"r"}') as string, /no decision/);
  });
});
