// Attacks on `latch mcp --http`. Each sends a tools/call that would write a file, and then checks
// that the request was turned away and the file does not exist.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { httpClient, startHttpServer, type HttpServerProc } from "../helpers/mcp.js";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "evil", version: "1" } },
};
const WRITE = (name: string) => ({
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: "write_file", arguments: { path: name, content: "pwned" } },
});

let fx: Fixture;
let server: HttpServerProc;
const headers = (extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});

before(async () => {
  fx = makeFixture();
  server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state]);
});
after(async () => {
  await server.stop();
  fx.cleanup();
});

async function post(body: unknown, extra: Record<string, string>): Promise<Response> {
  return fetch(server.url, { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
}

/** A real session id, made with the right token, to attack with. */
async function validSession(): Promise<string> {
  const r = await post(INIT, { authorization: `Bearer ${server.token}` });
  assert.equal(r.status, 200);
  await r.text();
  const sid = r.headers.get("mcp-session-id");
  assert.ok(sid);
  await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { authorization: `Bearer ${server.token}`, "mcp-session-id": sid },
  );
  return sid;
}

describe("HTTP attacks: nothing runs", () => {
  test("no token: 401, for initialize and for a call in a live session", async () => {
    assert.equal((await post(INIT, {})).status, 401);
    const sid = await validSession();
    const r = await post(WRITE("no-token.txt"), { "mcp-session-id": sid });
    assert.equal(r.status, 401);
    assert.match(r.headers.get("www-authenticate") ?? "", /Bearer/);
    assert.equal(existsSync(path.join(fx.root, "no-token.txt")), false);
  });

  test("a wrong token: 401", async () => {
    const sid = await validSession();
    for (const auth of [
      `Bearer ${server.token}x`,
      `Bearer ${server.token.slice(0, -1)}`,
      server.token,
      `Basic ${server.token}`,
    ]) {
      const r = await post(WRITE("wrong-token.txt"), { authorization: auth, "mcp-session-id": sid });
      assert.equal(r.status, 401, auth);
    }
    assert.equal(existsSync(path.join(fx.root, "wrong-token.txt")), false);
  });

  test("a bad Host header (DNS rebinding): 403", async () => {
    // fetch will not forge Host, so speak HTTP by hand.
    const { request } = await import("node:http");
    const url = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { ...headers({ authorization: `Bearer ${server.token}` }), host: `evil.example:${url.port}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(INIT));
    });
    assert.equal(status, 403);
  });

  test("a bad Origin: 403, even with the right token and session", async () => {
    const sid = await validSession();
    const r = await post(WRITE("bad-origin.txt"), {
      authorization: `Bearer ${server.token}`,
      "mcp-session-id": sid,
      origin: "http://evil.example",
    });
    assert.equal(r.status, 403);
    assert.equal(existsSync(path.join(fx.root, "bad-origin.txt")), false);
  });

  test("a session id this server never issued (another server's, or forged): 404", async () => {
    const other = await startHttpServer(["--root", fx.root, "--state-dir", fx.state], server.token);
    let foreign: string;
    try {
      const r = await fetch(other.url, {
        method: "POST",
        headers: headers({ authorization: `Bearer ${server.token}` }),
        body: JSON.stringify(INIT),
      });
      await r.text();
      foreign = r.headers.get("mcp-session-id")!;
    } finally {
      await other.stop();
    }
    for (const sid of [foreign, "00000000-0000-4000-8000-000000000000"]) {
      const r = await post(WRITE("foreign-session.txt"), {
        authorization: `Bearer ${server.token}`,
        "mcp-session-id": sid,
      });
      assert.equal(r.status, 404, sid);
    }
    assert.equal(existsSync(path.join(fx.root, "foreign-session.txt")), false);
  });

  test("the start banner gives the endpoint, the token and both client configs", async () => {
    for (let i = 0; i < 50 && !server.banner().includes("Ctrl-C"); i++) await new Promise((r) => setTimeout(r, 20));
    const b = server.banner();
    assert.match(b, new RegExp(`MCP endpoint: ${server.url.replace(/[.]/g, "\\.")}`));
    assert.match(b, new RegExp(`token: +${server.token}`));
    const configs = [...b.matchAll(/^ {4}\{\n[\s\S]*?^ {4}\}$/gm)].map((m) => JSON.parse(m[0]));
    assert.equal(configs.length, 2, b);
    assert.deepEqual(configs[0].mcpServers.latch, {
      type: "http",
      url: server.url,
      headers: { Authorization: `Bearer ${server.token}` },
    });
    assert.deepEqual(configs[1].mcpServers.latch.args.slice(1), ["mcp", "--root", fx.root, "--state-dir", fx.state]);
  });

  test("without LATCH_TOKEN a token is generated, stored with mode 0600, and works", async () => {
    const state = path.join(fx.base, "state-generated");
    const own = await startHttpServer(["--root", fx.root, "--state-dir", state], null);
    try {
      assert.match(own.token, /^[A-Za-z0-9_-]{40,}$/);
      const file = path.join(state, `http-token-${new URL(own.url).port}`);
      assert.equal(readFileSync(file, "utf8").trim(), own.token);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(
        (await post(INIT, { authorization: `Bearer ${server.token}` })).status,
        200,
        "the other server still takes its own token",
      );
      const r = await fetch(own.url, {
        method: "POST",
        headers: headers({ authorization: `Bearer ${server.token}` }),
        body: JSON.stringify(INIT),
      });
      assert.equal(r.status, 401, "a token from another server is refused");
      const mine = await fetch(own.url, {
        method: "POST",
        headers: headers({ authorization: `Bearer ${own.token}` }),
        body: JSON.stringify(INIT),
      });
      assert.equal(mine.status, 200, "the generated token works");
    } finally {
      await own.stop();
    }
  });

  test("the token file is 0600; the right token works", async () => {
    const client = await httpClient(server);
    const out = await client.callTool({ name: "write_file", arguments: { path: "legit.txt", content: "ok" } });
    assert.equal(out.isError, undefined, JSON.stringify(out));
    assert.equal(readFileSync(path.join(fx.root, "legit.txt"), "utf8"), "ok");
    await client.close();
    assert.equal(statSync(path.join(fx.state, `http-token-${new URL(server.url).port}`)).mode & 0o777, 0o600);
  });
});
