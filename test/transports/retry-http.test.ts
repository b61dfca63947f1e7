// An HTTP client that loses its connection in the middle of an edit (issue 27). The real SDK client
// against `latch mcp --http`; the edit is held mid-call by another process holding the file's lock,
// and the client's connection is cut after the call's first bytes (the SSE priming event). A client
// that retries the call with expected_sha256 once it landed is told "already applied" and the edit is
// in the file exactly once; a client that reconnects (the SDK does, with Last-Event-ID) receives the
// call's own answer from the session's event store.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sha256 } from "../../src/fs/text.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, startHttpServer, type HttpServerProc, type ToolResult } from "../helpers/mcp.js";
import { waitFor } from "../helpers/wait.js";

const HOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/hold-lock.ts");
const fx = makeFixture();
after(() => fx.cleanup());

/** Another process holding `rel`'s mutation lock until release(): the edit waits under it. */
async function holdLock(state: string, rel: string): Promise<{ release(): Promise<void> }> {
  const target = path.join(realpathSync(fx.root), rel);
  const child = spawn(process.execPath, ["--import", "tsx", HOLDER, path.join(state, "locks"), target], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    child.once("exit", (c) => reject(new Error(`lock holder exited ${c}`)));
  });
  return {
    release: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.stdin.end();
      }),
  };
}

/**
 * A fetch whose next tools/call answer is cut after its first chunk (the priming event), as a
 * dropped connection would: the client has sent the call and never sees its answer on that socket.
 */
function cuttingFetch(): { fetch: typeof fetch; cut(): void; wasCut: () => boolean } {
  let armed = false;
  let cut = false;
  const f: typeof fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (!armed || typeof init?.body !== "string" || !init.body.includes('"tools/call"') || !res.body) return res;
    armed = false;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        const { value, done } = await reader.read();
        if (done) return c.close();
        c.enqueue(value);
        cut = true;
        await reader.cancel(); // the socket goes away with the call's answer still to come
        c.error(new TypeError("terminated: other side closed"));
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { fetch: f, cut: () => (armed = true), wasCut: () => cut };
}

async function connect(server: HttpServerProc, f: typeof fetch, maxRetries: number): Promise<Client> {
  const client = new Client({ name: "latch-retry-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
      fetch: f,
      reconnectionOptions: {
        maxRetries,
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1.5,
      },
    }),
  );
  return client;
}

const read = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");

test("HTTP: the connection drops mid-edit; the retry with expected_sha256 is already applied, the edit is in the file once", async () => {
  fx.write({ "r.txt": "count: 1\n" });
  const server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state]);
  const net = cuttingFetch();
  const client = await connect(server, net.fetch, 0);
  try {
    const read1 = (await client.callTool({ name: "read_file", arguments: { path: "r.txt" } })) as ToolResult;
    const sha = fieldsOf(read1).sha256 as string;
    assert.equal(sha, sha256("count: 1\n"));
    const edit = { path: "r.txt", old_string: "count: 1", new_string: "count: 2", expected_sha256: sha };

    const lock = await holdLock(fx.state, "r.txt");
    net.cut();
    // The answer never comes on the cut connection, and this client does not reconnect.
    const lost = client.callTool({ name: "edit_file", arguments: edit }, undefined, { timeout: 60_000 }).then(
      () => "answered",
      () => "lost",
    );
    assert.ok(await waitFor(() => net.wasCut()), "the connection was cut after the call was sent");
    await lock.release();
    assert.ok(await waitFor(() => read("r.txt") === "count: 2\n"), "the edit landed on the server");

    const retry = (await client.callTool({ name: "edit_file", arguments: edit })) as ToolResult;
    assert.notEqual(retry.isError, true, JSON.stringify(retry));
    const f = fieldsOf(retry);
    assert.equal(f.already_applied, true, JSON.stringify(f));
    assert.equal(f.note, "already applied: the file's bytes equal the result of this edit");
    assert.equal(f.sha256, sha256("count: 2\n"));
    assert.equal(read("r.txt"), "count: 2\n", "landed exactly once");
    void lost;
  } finally {
    await client.close().catch(() => undefined);
    await server.stop();
  }
});

test("HTTP: a client that reconnects after the drop receives the edit's own answer (event store, Last-Event-ID)", async () => {
  fx.write({ "q.txt": "n = 1\n" });
  const state = path.join(fx.base, "state-2");
  const server = await startHttpServer(["--root", fx.root, "--state-dir", state]);
  const net = cuttingFetch();
  const client = await connect(server, net.fetch, 5);
  try {
    await client.callTool({ name: "read_file", arguments: { path: "q.txt" } });
    const lock = await holdLock(state, "q.txt");
    net.cut();
    const answer = client.callTool({
      name: "edit_file",
      arguments: { path: "q.txt", old_string: "n = 1", new_string: "n = 2" },
    });
    assert.ok(await waitFor(() => net.wasCut()), "the connection was cut after the call was sent");
    await lock.release();
    const r = (await answer) as ToolResult;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    const f = fieldsOf(r);
    assert.equal(f.written, true, JSON.stringify(f));
    assert.equal(f.new_sha256, sha256("n = 2\n"));
    assert.equal(read("q.txt"), "n = 2\n");
  } finally {
    await client.close().catch(() => undefined);
    await server.stop();
  }
});
