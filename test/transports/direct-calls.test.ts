// tools/call over stdio, served without the SDK's Protocol when its message has the plain shape
// (src/transports/mcp/direct-calls.ts): which messages take that path, and that a call answers the
// same on either path, streams progress, and is not answered once the client cancelled it (its
// process killed, its outcome logged).
import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, test } from "node:test";
import { plainCall } from "../../src/transports/mcp/direct-calls.js";
import { makeFixture } from "../helpers/fixture.js";
import { outcomes, policyLogs, processesRunning, RawStdio, RUN_TAG } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());

const call = (more: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name: "read_file", arguments: { path: "a.txt" }, ...params },
  ...more,
});

describe("which messages are served directly", () => {
  test("the plain shapes: with and without arguments, with a progress token and other _meta keys", () => {
    assert.deepEqual(plainCall(call()), { id: 7, params: { name: "read_file", arguments: { path: "a.txt" } } });
    assert.ok(plainCall(call({ id: "s-1" })));
    assert.ok(plainCall({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } }));
    assert.ok(plainCall(call({}, { _meta: { progressToken: "p", "client/toolUseId": "t" } })));
    assert.ok(plainCall(call({}, { _meta: { progressToken: 3 } })));
  });

  test("anything else is left to the SDK's schemas", () => {
    const off: [string, Record<string, unknown>][] = [
      ["another method", call({ method: "tools/list" })],
      ["no jsonrpc", call({ jsonrpc: undefined })],
      ["an id that is null, fractional or an object", call({ id: null })],
      ["a fractional id", call({ id: 1.5 })],
      ["an object id", call({ id: {} })],
      ["a member beside params", call({ extra: 1 })],
      ["an unknown member of params", call({}, { foo: 1 })],
      ["a task", call({}, { task: { ttl: 1000 } })],
      ["params an array", call({ params: [] })],
      ["no tool name", call({ params: { arguments: {} } })],
      ["a name that is not a string", call({}, { name: 5 })],
      ["arguments an array", call({}, { arguments: [] })],
      ["arguments a string", call({}, { arguments: "a.txt" })],
      ["arguments null", call({}, { arguments: null })],
      ["_meta a string", call({}, { _meta: "m" })],
      ["a progress token that is an object", call({}, { _meta: { progressToken: {} } })],
      ["a fractional progress token", call({}, { _meta: { progressToken: 0.5 } })],
      ["a call within a task", call({}, { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } })],
    ];
    for (const [what, m] of off) assert.equal(plainCall(m), undefined, what);
  });
});

describe("over real stdio", () => {
  const serverArgs = (state: string) => ["--root", fx.root, "--state-dir", state, "--yes"];

  test("a plain call and one the SDK serves (an unknown member of params) answer alike; bad ones still get -32602", async () => {
    fx.write({ "a.txt": "hello\nworld\n" });
    const s = new RawStdio(serverArgs(path.join(fx.base, "st-alike")));
    try {
      await s.init();
      const direct = await s.call(1, "read_file", { path: "a.txt", force: true });
      s.send(call({ id: 2 }, { arguments: { path: "a.txt", force: true }, foo: 1 }));
      const viaSdk = await s.reply(2);
      assert.equal(direct.result?.isError, undefined, JSON.stringify(direct));
      assert.match(direct.result.content[0].text, /hello\nworld/);
      assert.deepEqual(direct.result, viaSdk.result);
      const missing = await s.call(3, "read_file", { path: "nope.txt" });
      assert.equal(missing.result?.isError, true, JSON.stringify(missing));
      s.send(call({ id: 4 }, { arguments: "a.txt" }));
      assert.equal((await s.reply(4)).error?.code, -32602);
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("progress reaches the client while a direct call runs", async () => {
    const s = new RawStdio(serverArgs(path.join(fx.base, "st-progress")));
    try {
      await s.init();
      const done = s.call(1, "local_shell", { command: "sh", args: ["-c", "echo one; sleep 0.3; echo two"] }, "tok");
      const r = await done;
      assert.equal(r.result?.isError, undefined, JSON.stringify(r));
      const progress = s.replies.filter(
        (m) => (m as { method?: string }).method === "notifications/progress",
      ) as unknown as { params: { progressToken: string } }[];
      assert.ok(progress.length > 0, "progress was sent");
      assert.ok(progress.every((p) => p.params.progressToken === "tok"));
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("a cancelled direct call is not answered, its process is killed, its outcome is logged", async () => {
    const state = path.join(fx.base, "st-cancel");
    const s = new RawStdio(serverArgs(state));
    const marker = `31.${RUN_TAG}7`;
    try {
      await s.init();
      void s.call("sh", "local_shell", { command: "sleep", args: [marker] });
      assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 1), "the sleep started");
      s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "sh", reason: "the user" } });
      assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 0), "the sleep was killed");
      const ping = await s.request("p", "ping");
      assert.deepEqual(ping.result, {});
      // The cancelled call's answer would have come before the ping's: there is none.
      assert.equal(
        s.replies.some((r) => r.id === "sh"),
        false,
        JSON.stringify(s.replies.filter((r) => r.id === "sh")),
      );
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
    const [log] = policyLogs(state);
    assert.ok(log, "a policy log was written");
    assert.equal(outcomes(log).length, 1, "the cancelled call's outcome is on the log");
  });
});
