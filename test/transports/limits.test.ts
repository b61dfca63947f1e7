// Bounds at the transports (issue 27): arguments nested 10,000 deep are the client's fault (-32602,
// naming the limit), not an internal error, over stdio and over HTTP, and the session still serves.
import assert from "node:assert/strict";
import { request } from "node:http";
import path from "node:path";
import { after, test } from "node:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { MAX_JSON_DEPTH } from "../../src/transports/mcp/depth.js";
import { makeFixture } from "../helpers/fixture.js";
import { connectOver, rawSession, startHttpServer, TRANSPORTS } from "../helpers/mcp.js";
import { RawStdio } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());
fx.write({ "a.txt": "a\n" });
const BASE = ["--root", fx.root, "--state-dir", fx.state];
const DEEP = new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`);

/** `n` arrays, one inside the other. */
function nested(n: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < n; i++) v = [v];
  return v;
}

/** A tools/call whose `path` is `n` arrays deep, as text: JSON.stringify itself runs out of stack past ~4,000. */
const deepCall = (id: number, n: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_dir","arguments":{"path":${"[".repeat(n)}${"]".repeat(n)}}}}`;

for (const transport of TRANSPORTS) {
  test(`${transport}, a real MCP client: deep arguments are -32602 naming the limit; the session still serves`, async () => {
    const { client, close } = await connectOver(transport, BASE);
    try {
      // 3,000: as deep as the client's own JSON.stringify goes here; far past what the server walks.
      const err = await client.callTool({ name: "list_dir", arguments: { path: nested(3_000) } }).then(
        () => assert.fail("a 3,000-deep call was answered"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32602);
      assert.match(err.message, DEEP);
      // Under the limit is an ordinary call: the tool's own schema answers.
      const shallow = await client.callTool({ name: "list_dir", arguments: { path: nested(MAX_JSON_DEPTH - 4) } });
      assert.equal(shallow.isError, true);
      const ok = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
      assert.equal(ok.isError ?? false, false, JSON.stringify(ok));
    } finally {
      await close();
    }
  });
}

test("stdio, 10,000 deep on the wire: -32602 to its id, and the next call is served", async () => {
  const s = new RawStdio([...BASE.slice(0, 2), "--state-dir", path.join(fx.base, "st-stdio")]);
  try {
    await s.init();
    s.write(deepCall(7, 10_000));
    const r = await s.reply(7);
    assert.equal(r.error?.code, -32602, JSON.stringify(r));
    assert.match(r.error?.message ?? "", DEEP);
    const next = await s.call(8, "read_file", { path: "a.txt" });
    assert.ok(next.result, JSON.stringify(next));
  } finally {
    s.child.kill();
    await s.exited;
  }
});

test("HTTP, 10,000 deep in a session's POST: -32602 to its id, and the session is served after", async () => {
  const server = await startHttpServer([...BASE.slice(0, 2), "--state-dir", path.join(fx.base, "st-http")]);
  try {
    const sid = await rawSession(server.url, server.token);
    const post = (body: string) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${server.token}`,
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      });
    const r = await post(deepCall(7, 10_000));
    const answer = (await r.json()) as { id: number; error?: { code: number; message: string } };
    assert.equal(answer.id, 7);
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
    assert.match(answer.error?.message ?? "", DEEP);
    const next = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "read_file", arguments: { path: "a.txt" } },
      }),
    );
    assert.equal(next.status, 200);
    assert.match(await next.text(), /"id":8/);
  } finally {
    await server.stop();
  }
});

test(
  "HTTP: a request body that never completes gets 408 after --body-timeout, and its session is freed",
  { timeout: 120_000 },
  async () => {
    const server = await startHttpServer(
      [...BASE.slice(0, 2), "--state-dir", path.join(fx.base, "st-body"), "--body-timeout", "1", "--session-idle", "2"],
      undefined,
      { LATCH_LOG: "info" },
    );
    try {
      const sid = await rawSession(server.url, server.token);
      const url = new URL(server.url);
      // Half a body, then nothing: the connection stays open until latch gives up on it.
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              authorization: `Bearer ${server.token}`,
              "mcp-session-id": sid,
              "mcp-protocol-version": "2025-06-18",
              "content-length": "1000",
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.write('{"jsonrpc":"2.0","id":1,');
      });
      assert.equal(status, 408);
      // Freed: the session is no longer busy, so the idle sweep closes it (a busy one is never swept).
      assert.ok(
        await waitFor(() => server.stderr().includes(`HTTP session ${sid} closed: idle`)),
        `the session was swept: ${server.stderr()}`,
      );
    } finally {
      await server.stop();
    }
  },
);
