// HTTP sessions end: an idle session is closed and its id answers 404; the cap refuses a new session
// with a clear error; DELETE is honoured. And a second `latch mcp --http` that fails to start (a busy
// port) leaves the running server's token file alone; the banner's stdio config keeps the user's flags;
// SIGTERM, the moment the banner is printed or while a client holds a connection open, stops it cleanly.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { RAW_INIT, rawPost as post, rawSession as open, startHttpServer } from "../helpers/mcp.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());

const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

test("an idle session is closed: its id then answers 404, and a new session works", async () => {
  const s = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--session-idle", "3"], undefined, {
    LATCH_LOG: "info",
  });
  try {
    const sid = await open(s.url, s.token);
    const live = await post(s.url, s.token, LIST, sid);
    assert.equal(live.status, 200);
    await live.text();
    // Any request would keep it alive: wait for the server's own word (bounded: 20 s for a 3 s limit).
    for (let i = 0; i < 100 && !s.stderr().includes(`HTTP session ${sid} closed: idle`); i++)
      await new Promise((r) => setTimeout(r, 200));
    assert.match(s.stderr(), new RegExp(`HTTP session ${sid} closed: idle`));
    const r = await post(s.url, s.token, LIST, sid);
    assert.equal(r.status, 404);
    assert.match(await r.text(), /unknown or expired session/);
    await open(s.url, s.token);
  } finally {
    await s.stop();
  }
});

test("the session cap refuses a new session with a clear error; DELETE frees a place", async () => {
  const s = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--max-sessions", "2"]);
  try {
    const a = await open(s.url, s.token);
    await open(s.url, s.token);
    const third = await post(s.url, s.token, RAW_INIT);
    assert.equal(third.status, 503);
    assert.match(await third.text(), /too many open sessions \(2, --max-sessions\): close one with DELETE/);
    const del = await fetch(s.url, {
      method: "DELETE",
      headers: { authorization: `Bearer ${s.token}`, "mcp-session-id": a, "mcp-protocol-version": "2025-06-18" },
    });
    assert.equal(del.status, 200);
    const gone = await post(s.url, s.token, LIST, a);
    assert.equal(gone.status, 404, "a deleted session does not answer");
    await open(s.url, s.token);
  } finally {
    await s.stop();
  }
});

test("a second server on a busy port fails and leaves the running server's token file alone", async () => {
  const s = await startHttpServer(["--root", fx.root, "--state-dir", fx.state]);
  try {
    const port = new URL(s.url).port;
    const tokenFile = path.join(fx.state, `http-token-${port}`);
    assert.equal(readFileSync(tokenFile, "utf8").trim(), s.token);
    const second = spawnSync(
      process.execPath,
      [CLI, "mcp", "--http", "--port", port, "--root", fx.root, "--state-dir", fx.state],
      { encoding: "utf8", timeout: 20_000, env: { ...process.env, LATCH_TOKEN: "" } },
    );
    assert.equal(second.status, 1);
    assert.match(second.stderr, /Port \d+ is in use/);
    assert.equal(readFileSync(tokenFile, "utf8").trim(), s.token, "the token file is still the running server's");
  } finally {
    await s.stop();
  }
});

test("the banner's stdio config carries the user's flags, and it starts a working latch", async () => {
  const log = path.join(fx.base, "http-run.log");
  const s = await startHttpServer([
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--envelope",
    "strict",
    "--session-idle",
    "60",
    "--policy-log",
    log,
  ]);
  try {
    for (let i = 0; i < 50 && !s.banner().includes("Ctrl-C"); i++) await new Promise((r) => setTimeout(r, 20));
    const configs = [...s.banner().matchAll(/^ {4}\{\n[\s\S]*?^ {4}\}$/gm)].map((m) => JSON.parse(m[0]));
    const stdio = configs[1].mcpServers.latch as { command: string; args: string[] };
    assert.deepEqual(stdio.args.slice(1), [
      "mcp",
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--envelope",
      "strict",
      "--policy-log",
      fx.base + "/",
    ]);
    const client = new Client({ name: "from-banner", version: "1" });
    await client.connect(new StdioClientTransport({ command: stdio.command, args: stdio.args, stderr: "pipe" }));
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === "read_file"));
    } finally {
      await client.close();
    }
  } finally {
    await s.stop();
  }
});

test("SIGTERM as soon as the banner is printed is handled: latch stops cleanly and removes its run record", async () => {
  // The banner is the sign that the server is ready: a supervisor may signal the moment it reads it. A
  // latch that set its handlers only after printing it died of such a signal at some starts (half, on a
  // busy 2-core machine): hence several starts.
  for (let i = 0; i < 10; i++) {
    const state = path.join(fx.base, `st-term-${i}`);
    const s = await startHttpServer(["--root", fx.root, "--state-dir", state], undefined, { LATCH_LOG: "info" });
    const exited = once(s.child, "exit");
    s.child.kill("SIGTERM");
    assert.deepEqual(await exited, [0, null], `start ${i}: ${s.stderr()}`);
    assert.match(s.stderr(), /SIGTERM received; 0 running call\(s\) cancelled; latch stopped\./);
    assert.deepEqual(readdirSync(path.join(state, "runs")), [], `start ${i}: the run record is removed`);
  }
});

test("SIGTERM stops the server at once, though a client holds a connection open mid-request", async () => {
  const s = await startHttpServer(["--root", fx.root, "--state-dir", fx.state], undefined, { LATCH_LOG: "info" });
  const url = new URL(s.url);
  const sock = connect(Number(url.port), url.hostname);
  sock.on("error", () => undefined);
  try {
    await once(sock, "connect");
    // A request whose body never finishes: the server's own timeouts would end it only after minutes.
    // `Expect: 100-continue` makes the server say when it has taken the request.
    const body = JSON.stringify(RAW_INIT);
    sock.write(
      `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${s.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const [taken] = (await once(sock, "data")) as [Buffer];
    assert.match(taken.toString(), /^HTTP\/1\.1 100 Continue\r\n/);
    sock.write(body.slice(0, 10));
    s.child.kill("SIGTERM");
    assert.ok(await waitFor(() => s.child.exitCode !== null, 20_000), `latch still runs after SIGTERM: ${s.stderr()}`);
    assert.equal(s.child.exitCode, 0);
    assert.match(s.stderr(), /SIGTERM received; 0 running call\(s\) cancelled; latch stopped\./);
  } finally {
    sock.destroy();
    await s.stop();
  }
});
