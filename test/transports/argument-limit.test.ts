// A tool's argument limit at the transports (issue 27): a process_input call of 1 MiB is answered
// -32602 from its bytes, naming the limit and the fix, over stdio and HTTP, and never reaches the call
// path (no decision logged); the longest text the tool accepts still passes, whatever its escapes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { peekCall } from "../../src/transports/mcp/call-size.js";
import { makeFixture } from "../helpers/fixture.js";
import {
  connectOver,
  fieldsOf,
  rawPost,
  rawSession,
  startHttpServer,
  TRANSPORTS,
  type ToolResult,
} from "../helpers/mcp.js";
import { policyLogs, RawStdio, RUN_TAG } from "../helpers/raw-stdio.js";

const fx = makeFixture();
after(() => fx.cleanup());
const LIMIT =
  /over latch's limit for one process_input call \(388 KiB\), so latch did not read them\. Send at most 64 Ki characters/;

/** The tools the log decided on, in order. */
function decided(stateDir: string): string[] {
  return policyLogs(stateDir).flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).record)
      .filter((r) => r.type === "effect_decision")
      .map((r) => String(r.tool)),
  );
}

test("peekCall reads the id, the tool and the arguments' size from the bytes, as JSON.parse would", () => {
  const cases: [unknown, string][] = [
    [{ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "t", arguments: { a: 'q"\\\\"x\\' } } }, "plain"],
    [
      { params: { arguments: { a: [1, { b: "}]" }] }, name: "t" }, method: "tools/call", id: 'x"y', jsonrpc: "2.0" },
      "reordered",
    ],
    [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "é\u2028", arguments: {} } }, "non-ASCII name"],
  ];
  for (const [msg, what] of cases) {
    const m = msg as { id: string | number; params: { name: string; arguments: unknown } };
    const head = peekCall(Buffer.from(JSON.stringify(msg)));
    assert.deepEqual(
      head,
      { id: m.id, name: m.params.name, argumentBytes: Buffer.byteLength(JSON.stringify(m.params.arguments)) },
      what,
    );
  }
  // Spaces anywhere; a repeated key: the last one counts, as in JSON.parse.
  const spaced = Buffer.from(
    ' { "id" : 3 , "method" : "tools/call" , "params" : { "name" : "write_file" , "arguments" : { "x" : 1 } , "name" : "process_input" } }\r',
  );
  assert.deepEqual(peekCall(spaced), { id: 3, name: "process_input", argumentBytes: 11 });
  // Not a call, or not plainly readable: left to the ordinary parse.
  for (const other of [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t","arguments":{}}}',
    '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"unterminated}}}',
    '{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"t","arguments":{}}}',
    '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}]',
    "not json",
  ])
    assert.equal(peekCall(Buffer.from(other)), undefined, other);
});

for (const transport of TRANSPORTS) {
  test(`${transport}, a real MCP client: a 1 MiB process_input is -32602 naming the limit, unlogged; the longest accepted text passes`, async () => {
    const state = path.join(fx.base, `st-${transport}`);
    const { client, close } = await connectOver(transport, ["--root", fx.root, "--state-dir", state, "--yes"]);
    try {
      const call = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args }) as Promise<ToolResult>;
      const started = await call("local_shell", { command: "sleep", args: [`311${RUN_TAG}`], background: true });
      const id = fieldsOf(started).id as string;
      for (const name of ["process_input", "interact_with_process"]) {
        const err = await call(name, { id, text: "x".repeat(1 << 20), wait_ms: 0 }).then(
          (r) => assert.fail(`a 1 MiB call was answered: ${JSON.stringify(r).slice(0, 300)}`),
          (e: unknown) => e,
        );
        assert.ok(err instanceof McpError, String(err));
        assert.equal(err.code, -32602);
        assert.match(err.message, new RegExp(`this ${name} call are 1\\.0 MiB of JSON`));
      }
      const whole = await call("process_input", { id, text: "x".repeat(1 << 20) }).then(
        (r) => JSON.stringify(r),
        (e: Error) => e.message,
      );
      assert.match(whole, LIMIT);
      // The schema's limit, every character escaped (6 bytes of JSON each): within the transport's.
      const longest = await call("process_input", { id, text: "\u0001".repeat(64 * 1024), wait_ms: 0 });
      assert.equal(longest.isError ?? false, false, JSON.stringify(longest).slice(0, 300));
      const f = fieldsOf(longest);
      assert.equal(f.taken_bytes + f.queued_bytes, 64 * 1024);
      // One character past it gets through the transport and is refused by the tool's schema.
      const over = await call("process_input", { id, text: "x".repeat(64 * 1024 + 1) });
      assert.equal(over.isError, true);
      assert.match(JSON.stringify(over.content), /at most 65536 characters/);
      // Only the calls that reached the call path were decided and logged.
      assert.deepEqual(decided(state), ["local_shell", "process_input", "process_input"]);
      await call("process_kill", { id });
    } finally {
      await close();
    }
  });
}

test("stdio, on the wire: the refusal goes to the call's string id, and the next call is served", async () => {
  const s = new RawStdio(["--root", fx.root, "--state-dir", path.join(fx.base, "st-raw")]);
  try {
    await s.init();
    // The arguments first and the name last, as some clients write them.
    s.write(
      `{"params":{"arguments":{"id":"bg1","text":"${"y".repeat(500_000)}"},"name":"process_input"},"method":"tools/call","id":"big one","jsonrpc":"2.0"}`,
    );
    const r = await s.reply("big one");
    assert.equal(r.error?.code, -32602, JSON.stringify(r));
    assert.match(r.error?.message ?? "", /are 489 KiB of JSON, over latch's limit/);
    const next = await s.call(2, "process_list", {});
    assert.ok(next.result, JSON.stringify(next));
  } finally {
    s.child.kill();
    await s.exited;
  }
});

test("HTTP, a raw POST in a session: -32602 to its id, and the session is served after", async () => {
  const server = await startHttpServer(["--root", fx.root, "--state-dir", path.join(fx.base, "st-raw-http")]);
  try {
    const sid = await rawSession(server.url, server.token);
    const big = {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "process_input", arguments: { id: "bg1", text: "z".repeat(1 << 20) } },
    };
    const r = await rawPost(server.url, server.token, big, sid);
    assert.equal(r.status, 200);
    const answer = (await r.json()) as { id: number; error?: { code: number; message: string } };
    assert.deepEqual([answer.id, answer.error?.code], [9, -32602], JSON.stringify(answer));
    assert.match(answer.error?.message ?? "", LIMIT);
    const next = await rawPost(
      server.url,
      server.token,
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "process_list", arguments: {} } },
      sid,
    );
    assert.equal(next.status, 200);
    assert.match(await next.text(), /"id":10/);
  } finally {
    await server.stop();
  }
});
