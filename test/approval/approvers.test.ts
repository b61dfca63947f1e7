import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, describe, test } from "node:test";
import { yesApprover, type ApprovalRequest } from "../../src/approval/approver.js";
import { queueApprover } from "../../src/approval/queue.js";
import { waitFor } from "../helpers/wait.js";
import { ApprovalQueue, sqliteStore } from "../../src/store/sqlite.js";
import { ttyApprover } from "../../src/approval/tty.js";
import { CLI, runCli } from "../helpers/cli.js";
import { expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";

const REQ: ApprovalRequest = {
  id: "1",
  tool: "write_file",
  args: { path: "a" },
  session: "s",
  reason: "envelope default: files.write = approve",
  diff: "--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+x\n",
  timeoutMs: 5000,
};

describe("approvers", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("the terminal prompt shows the reason and the diff, and only y or yes approves", async () => {
    for (const [typed, approved] of [
      ["y\n", true],
      ["yes\n", true],
      ["\n", false],
      ["n\n", false],
      ["sure\n", false],
    ] as const) {
      const input = new PassThrough();
      const output = new PassThrough();
      let shown = "";
      output.on("data", (c) => (shown += c));
      const p = ttyApprover(input, output).request(REQ, new AbortController().signal);
      input.write(typed);
      const a = await p;
      assert.equal(a.approved, approved, JSON.stringify(typed));
      assert.match(shown, /write_file needs your approval: envelope default: files\.write = approve/);
      assert.match(shown, /\+\+\+ b\/a\n@@ -0,0 \+1 @@\n\+x/);
      assert.match(shown, /Run it\? \[y\/N\] $/);
    }
    const input = new PassThrough();
    const closed = ttyApprover(input, new PassThrough()).request(REQ, new AbortController().signal);
    input.end();
    assert.equal((await closed).approved, false);
  });

  test("the queue: a waiting request is listed, shown, and answered from another handle", async () => {
    const q1 = sqliteStore(path.join(fx.base, "q.db"));
    const q2 = new ApprovalQueue(path.join(fx.base, "q.db"));
    let id = "";
    const answer = queueApprover(q1.approvals, { workspace: fx.root }, (i) => (id = i)).request(
      REQ,
      new AbortController().signal,
    );
    await waitFor(() => id !== "");
    const listed = q2.list();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].id, id);
    assert.equal(listed[0].diff, REQ.diff);
    assert.equal(listed[0].workspace, fx.root, "labelled with its workspace");
    assert.equal(q2.answer(id, { approved: false, scope: "once" }), true);
    assert.deepEqual(await answer, { approved: false, by: `latch approvals deny ${id}`, reason: "a person denied it" });
    assert.equal(q2.list().length, 0, "answered requests leave the queue");
    assert.equal(
      q2.answer(id, { approved: true, scope: "once" }),
      false,
      "an answered request cannot be answered again",
    );
    await q1.close();
    q2.close();
  });

  test("an approval that times out is a deny, and nothing is written", async () => {
    const cfg = path.join(fx.base, "short.toml");
    writeFileSync(cfg, '[envelopes.hasty]\nextends = "default"\ntimeout = 1\n');
    const { loadConfig } = await import("../../src/config/load.js");
    const host = await fx.host({
      config: loadConfig(cfg),
      envelope: "hasty",
      approver: { name: "slow", request: () => new Promise(() => {}) },
    });
    const out = expectRefused(await host.call("write_file", { path: "late.txt", content: "x" }));
    assert.match(out.reason, /nobody approved within 1 s \(on_timeout = deny\)/);
    assert.equal(existsSync(path.join(fx.root, "late.txt")), false);
  });

  test("an approver that throws is a deny", async () => {
    const host = await fx.host({
      envelope: "strict",
      approver: {
        name: "broken",
        request: async () => {
          throw new Error("socket closed");
        },
      },
    });
    const out = expectRefused(await host.call("write_file", { path: "thrown.txt", content: "x" }));
    assert.match(out.reason, /approval failed, so the call is blocked: socket closed/);
    assert.equal(existsSync(path.join(fx.root, "thrown.txt")), false);
  });

  test("--yes approves, and the log says it was approved that way", async () => {
    const log = path.join(fx.base, "yes.jsonl");
    const host = await fx.host({ envelope: "strict", approver: yesApprover, policyLog: log });
    assert.equal((await host.call("write_file", { path: "yes.txt", content: "x" })).status, "ok");
    host.close();
    const decision = readFileSync(log, "utf8")
      .split("\n")
      .map((l) => (l ? JSON.parse(l) : null))
      .find((l) => l?.record.type === "effect_decision");
    assert.equal(decision.record.final, "allow");
    assert.equal(decision.record.reason, "approved by --yes (approve all); for the content yes.txt (new)");
    assert.deepEqual(decision.record.gates.at(-1), { gate: "approval", action: "allow", origin: "approver:yes" });
  });

  describe("latch call", () => {
    const base = () => ["--root", fx.root, "--state-dir", fx.state];

    test("without a terminal and without --yes, an approval becomes a refusal (exit 3)", async () => {
      const r = await runCli([
        "call",
        "write_file",
        '{"path":"cli-no.txt","content":"x"}',
        "--envelope",
        "default",
        ...base(),
      ]);
      assert.equal(r.code, 3);
      assert.equal(r.json.gate, "approval");
      assert.equal(existsSync(path.join(fx.root, "cli-no.txt")), false);
      const y = await runCli([
        "call",
        "write_file",
        '{"path":"cli-yes.txt","content":"x"}',
        "--envelope",
        "default",
        "--yes",
        ...base(),
      ]);
      assert.equal(y.code, 0, y.stdout + y.stderr);
      assert.equal(readFileSync(path.join(fx.root, "cli-yes.txt"), "utf8"), "x");
    });

    test("on a terminal (a pty from script(1)) the prompt shows the diff; y writes, n refuses", async () => {
      assert.ok(existsSync("/usr/bin/script"), "script(1) from bsdutils gives this test its pty");
      const onTty = (rel: string, typed: string) =>
        new Promise<{ code: number; out: string }>((resolve) => {
          const inner = [
            process.execPath,
            CLI,
            "call",
            "write_file",
            JSON.stringify({ path: rel, content: "tty\n" }),
            "--envelope",
            "default",
            ...base(),
          ]
            .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
            .join(" ");
          const child = execFile("/usr/bin/script", ["-qec", inner, "/dev/null"], (err, stdout) =>
            resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout }),
          );
          child.stdin!.end(typed);
        });
      const no = await onTty("tty-no.txt", "n\n");
      assert.match(no.out, /write_file needs your approval: envelope default: files\.write = approve/);
      assert.match(no.out, /\+\+\+ b\/tty-no\.txt\r?\n@@ -0,0 \+1,1 @@\r?\n\+tty/);
      assert.match(no.out, /Run it\? \[y\/N\] /);
      assert.match(no.out, /"status":"refused".*the person at the terminal said no/);
      assert.equal(no.code, 3);
      assert.equal(existsSync(path.join(fx.root, "tty-no.txt")), false);
      const yes = await onTty("tty-yes.txt", "y\n");
      assert.equal(yes.code, 0, yes.out);
      assert.equal(readFileSync(path.join(fx.root, "tty-yes.txt"), "utf8"), "tty\n");
    });

    test("auto_edit is the default envelope: a write runs without asking", async () => {
      const r = await runCli(["call", "write_file", '{"path":"auto.txt","content":"x"}', ...base()]);
      assert.equal(r.code, 0, r.stdout);
    });

    for (const verdict of ["approve", "deny"] as const) {
      test(`--wait-approval: \`latch approvals ${verdict} ID\` from another process answers the waiting call`, async () => {
        const rel = `queued-${verdict}.txt`;
        const call = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            [
              CLI,
              "call",
              "write_file",
              JSON.stringify({ path: rel, content: "queued\n" }),
              "--envelope",
              "default",
              "--wait-approval",
              ...base(),
            ],
            (err, stdout, stderr) =>
              resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        });
        // wait (in-process, cheaply) until the call is queued, then use the CLI as a person would
        const q = new ApprovalQueue(path.join(fx.state, "latch.db"));
        for (
          let i = 0;
          i < 300 && !q.list().some((x) => x.tool === "write_file" && (x.args as { path: string }).path === rel);
          i++
        )
          await new Promise((r) => setTimeout(r, 50));
        q.close();
        const l = await runCli(["approvals", "list", "--json", "--state-dir", fx.state]);
        const item = (l.json as { id: string; tool: string; has_diff: boolean }[]).find((x) => x.tool === "write_file");
        assert.ok(item, "the waiting call never showed up in `latch approvals list`");
        assert.equal(item.has_diff, true);
        const shown = await runCli(["approvals", "show", item.id, "--state-dir", fx.state]);
        assert.match(shown.stdout, new RegExp(`\\+\\+\\+ b/${rel}\\n@@ -0,0 \\+1,1 @@\\n\\+queued`));
        assert.equal(existsSync(path.join(fx.root, rel)), false, "nothing is written while the call waits");
        const answered = await runCli(["approvals", verdict, item.id, "--state-dir", fx.state]);
        assert.equal(answered.code, 0, answered.stdout);
        const done = await call;
        assert.match(done.stderr, new RegExp(`waiting for approval ${item.id}`));
        if (verdict === "approve") {
          assert.equal(done.code, 0, done.stdout);
          assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), "queued\n");
        } else {
          assert.equal(done.code, 3);
          assert.match(JSON.parse(done.stdout).reason, /a person denied it/);
          assert.equal(existsSync(path.join(fx.root, rel)), false);
        }
        const again = await runCli(["approvals", "approve", item.id, "--state-dir", fx.state]);
        assert.equal(again.code, 1);
      });
    }
  });
});
