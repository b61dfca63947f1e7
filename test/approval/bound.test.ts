// Approvals bound to the bytes a person saw (issue 13, points 5–7):
// - a file changed between the approval preview and the write is refused as stale, nothing written,
//   through every approver (terminal prompt, the queue behind `latch approvals`, MCP elicitation),
//   and the next try asks again with a fresh diff;
// - a call that fails its own checks (not read, no match, ambiguous, unread file overwritten …) is
//   refused before anyone is asked, and the policy log says so;
// - ESC sequences, carriage returns and bidi controls in a diff reach every approver escaped.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, describe, test } from "node:test";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import { queueApprover } from "../../src/approval/queue.js";
import { ApprovalQueue, sqliteStore } from "../../src/store/sqlite.js";
import { ttyApprover } from "../../src/approval/tty.js";
import { hasHidden } from "../../src/approval/visible.js";
import type { CallResult } from "../../src/host/types.js";
import { runCli } from "../helpers/cli.js";
import { expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";
import { modelView, stdioClient, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
const file = (rel: string) => path.join(fx.root, rel);
const read = (rel: string) => readFileSync(file(rel), "utf8");

/** Writes `changed` into the file while the person looks at the diff, then says yes. */
function changingApprover(
  kind: "terminal" | "queue",
  rel: string,
  changed: string,
): { approver: Approver; asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = [];
  if (kind === "terminal") {
    const input = new PassThrough();
    const output = new PassThrough();
    const tty = ttyApprover(input, output);
    output.on("data", (d: Buffer) => {
      if (d.toString().includes("Run it? [y/N]")) {
        writeFileSync(file(rel), changed);
        input.write("y\n");
      }
    });
    return { asked, approver: { name: "terminal", request: (req, s) => (asked.push(req), tty.request(req, s)) } };
  }
  const dbFile = path.join(fx.base, `q-${Math.random()}.db`);
  const q = new ApprovalQueue(dbFile);
  const approver = queueApprover(sqliteStore(dbFile).approvals, { workspace: fx.root }, (id) => {
    writeFileSync(file(rel), changed);
    q.answer(id, { approved: true, scope: "once" });
  });
  return { asked, approver: { name: "queue", request: (req, s) => (asked.push(req), approver.request(req, s)) } };
}

describe("approvals bound to bytes", () => {
  for (const kind of ["terminal", "queue"] as const) {
    test(`${kind}: a file changed between the approval and the write is refused as stale; nothing is written; the next try asks again`, async () => {
      const rel = `${kind}.txt`;
      fx.write({ [rel]: "one\ntwo\n" });
      const { approver, asked } = changingApprover(kind, rel, "one\ntwo\nSNEAKED IN\n");
      const h = await fx.host({
        envelope: "strict",
        approver: { name: "yes", request: async () => ({ approved: true, by: "t" }) },
      });
      assert.equal((await h.call("read_file", { path: rel })).status, "ok");
      const r: CallResult = await h.call(
        "edit_file",
        { path: rel, old_string: "two", new_string: "TWO" },
        { approver },
      );
      assert.match(expectRefused(r).reason, /changed since you read it|stale/);
      assert.equal(read(rel), "one\ntwo\nSNEAKED IN\n", "nothing was written");
      assert.equal(asked.length, 1);
      assert.match(asked[0].diff!, /-two\n\+TWO/);
      assert.match(asked[0].contentSha256![rel]!, /^[0-9a-f]{64}$/);
      // Read again, and the person is asked again with the diff of what is there now.
      await h.call("read_file", { path: rel });
      const seen: ApprovalRequest[] = [];
      const again = await h.call(
        "edit_file",
        { path: rel, old_string: "two", new_string: "TWO" },
        { approver: { name: "r", request: async (req) => (seen.push(req), { approved: true, by: "t" }) } },
      );
      assert.equal(again.status, "ok", JSON.stringify(again));
      assert.match(seen[0].diff!, /SNEAKED IN/);
      assert.equal(read(rel), "one\nTWO\nSNEAKED IN\n");
    });
  }

  test("MCP elicitation: a file changed while the form is open is refused as stale; nothing is written", async () => {
    fx.write({ "mcp.txt": "alpha\n" });
    const log = path.join(fx.base, "mcp-policy.log");
    let forms = 0;
    const client = await stdioClient(
      ["--root", fx.root, "--state-dir", fx.state, "--envelope", "strict", "--policy-log", log],
      () => {
        forms++;
        if (forms === 2) writeFileSync(file("mcp.txt"), "alpha\nbeta\n"); // the edit's form (the first is the read's)
        return true;
      },
    );
    try {
      await client.callTool({ name: "read_file", arguments: { path: "mcp.txt" } });
      const r = (await client.callTool({
        name: "write_file",
        arguments: { path: "mcp.txt", content: "replaced\n" },
      })) as ToolResult;
      assert.match(modelView(r), /changed since you read it|stale/);
      assert.equal(read("mcp.txt"), "alpha\nbeta\n");
    } finally {
      await client.close();
    }
  });

  test("a person is never asked about a call that fails its own checks, and the log says why", async () => {
    fx.write({ "c.txt": "same\nsame\n", "unread.txt": "x\n" });
    let asked = 0;
    const policyLog = path.join(fx.base, "cheap.jsonl");
    const h = await fx.host({
      envelope: "strict",
      policyLog,
      approver: {
        name: "counter",
        request: async (req) => (req.tool === "read_file" || asked++, { approved: true, by: "t" }),
      },
    });
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ["edit_file", { path: "unread.txt", old_string: "x", new_string: "z" }, /read/i], // not read yet
      ["write_file", { path: "unread.txt", content: "y\n" }, /read/i],
    ];
    for (const [tool, args, why] of calls) {
      const r = await h.call(tool, args);
      assert.notEqual(r.status, "ok", `${tool}: ${JSON.stringify(r)}`);
      assert.match(JSON.stringify(r), why);
    }
    await h.call("read_file", { path: "c.txt" });
    for (const [tool, args] of [
      ["edit_file", { path: "c.txt", old_string: "absent", new_string: "x" }], // no match
      ["edit_file", { path: "c.txt", old_string: "same", new_string: "x" }], // ambiguous
      ["sed", { path: "c.txt", pattern: "same", replacement: "x", all: true, expect_replacements: 5 }], // wrong count
      ["hash_edit", { path: "c.txt", edits: [{ op: "delete", pos: "1#ZZZZ" }] }], // stale anchor
    ] as const) {
      const r = await h.call(tool, args);
      assert.notEqual(r.status, "ok", `${tool}: ${JSON.stringify(r)}`);
    }
    assert.equal(asked, 0, "nobody was asked");
    assert.equal(read("c.txt"), "same\nsame\n");
    assert.equal(read("unread.txt"), "x\n");
    h.close();
    const denied = readFileSync(policyLog, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l).record)
      .filter((r) => r.type === "effect_decision" && r.tool !== "read_file");
    assert.equal(denied.length, 6);
    for (const d of denied) {
      assert.equal(d.final, "deny");
      assert.match(d.reason, /fails its own checks, so nobody was asked/);
    }
  });

  test("ESC[2K, a carriage return and a bidi override in new content reach every approver escaped", async () => {
    const evil = "safe line\n\x1b[2K\rrm -rf ~ # looks harmless\u202e\n";
    const seen: ApprovalRequest[] = [];
    const out = new PassThrough();
    let printed = "";
    out.on("data", (d: Buffer) => (printed += d.toString()));
    const input = new PassThrough();
    const tty = ttyApprover(input, out);
    const h = await fx.host({ envelope: "strict" });
    out.on("data", (d: Buffer) => d.toString().includes("Run it?") && input.write("n\n"));
    await h.call(
      "write_file",
      { path: "evil.sh", content: evil },
      { approver: { name: "t", request: (req, s) => (seen.push(req), tty.request(req, s)) } },
    );
    assert.equal(hasHidden(seen[0].diff!), false);
    assert.match(seen[0].diff!, /\+\\e\[2K\\rrm -rf ~ # looks harmless\\u202e/);
    assert.match(seen[0].diffNote!, /shown escaped/);
    assert.equal(hasHidden(printed), false, "the terminal prompt printed a hidden character");
    assert.equal(printed.includes("\x1b") || printed.includes("\u202e"), false);

    // The queue: what `latch approvals show` prints.
    const state = path.join(fx.base, "qstate");
    mkdirSync(state, { recursive: true });
    const q = new ApprovalQueue(path.join(state, "latch.db"));
    const h2 = await fx.host({
      envelope: "strict",
      stateDir: state,
      approver: queueApprover(sqliteStore(path.join(state, "latch.db")).approvals, { workspace: fx.root }),
    });
    const pending = h2.call("write_file", { path: "evil2.sh", content: evil });
    let id: string | undefined;
    for (let i = 0; i < 100 && !id; i++) {
      id = q.list()[0]?.id;
      if (!id) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(id, "the request reached the queue");
    const shown = await runCli(["approvals", "--state-dir", state, "show", id]);
    assert.match(shown.stdout, /\\e\[2K\\r/);
    assert.equal(hasHidden(shown.stdout), false);
    q.answer(id, { approved: false, scope: "once" });
    assert.equal((await pending).status, "refused");
  });
});
