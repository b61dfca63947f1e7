// `latch mcp` over stdio answers the first initialize and tools/list before it loads the MCP SDK
// (src/transports/mcp/early.ts). What must hold: those answers are the SDK's Server's own answers; the
// hand checks take only messages the SDK's schemas pass (anything else goes to the SDK, which answers
// or refuses it as before); the SDK learns the client's capabilities from the initialize it did not
// answer (roots); and what the client sends before the SDK is loaded is served, in order.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { EarlyAnswers } from "../../src/transports/mcp/early.js";
import { plainInitialize, plainListTools } from "../../src/transports/mcp/plain.js";
import * as handshake from "../../src/transports/mcp/handshake.js";
import { createMcpSession } from "../../src/transports/mcp/server.js";
import { makeFixture } from "../helpers/fixture.js";
import { RawStdio } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture("latch-early-");
after(() => fx.cleanup());

type Msg = Record<string, unknown>;
const init = (params: Msg = {}, more: Msg = {}): Msg => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" }, ...params },
  ...more,
});
const caps = (capabilities: unknown) => init({ capabilities });
const list = (more: Msg = {}): Msg => ({ jsonrpc: "2.0", id: 2, method: "tools/list", ...more });

describe("the hand checks take only what the SDK's schemas pass", () => {
  const sdkPasses = (m: Msg, schema: { safeParse(v: unknown): { success: boolean } }) =>
    JSONRPCMessageSchema.safeParse(m).success && schema.safeParse(m).success;

  test("the versions are the SDK's", () => {
    assert.equal(handshake.LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION);
    assert.deepEqual(handshake.SUPPORTED_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS);
  });

  test("initialize: what clients send is taken; every message taken passes the SDK's schemas", () => {
    const taken: [string, Msg][] = [
      ["no capabilities", init()],
      ["a string id", init({}, { id: "i-1" })],
      ["an unknown protocol version (answered with the latest)", init({ protocolVersion: "2099-01-01" })],
      ["roots that change", caps({ roots: { listChanged: true } })],
      ["roots, sampling, elicitation", caps({ roots: {}, sampling: {}, elicitation: {} })],
      ["elicitation by form and url", caps({ elicitation: { form: { applyDefaults: true }, url: {} } })],
      ["sampling with context and tools", caps({ sampling: { context: {}, tools: {} } })],
      ["tasks", caps({ tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} } } } })],
      ["experimental and extensions", caps({ experimental: { x: {} }, extensions: { "v/e": {} } })],
      ["a capability the SDK does not know (it drops it)", caps({ "vendor/thing": 5 })],
      ["capabilities named as Object's own members (unknown to both)", caps({ constructor: 5, toString: 1 })],
      [
        "a client title and website",
        init({ clientInfo: { name: "c", version: "1", title: "C", websiteUrl: "https://c" } }),
      ],
    ];
    for (const [what, m] of taken) {
      assert.ok(plainInitialize(m), `taken: ${what}`);
      assert.ok(sdkPasses(m, InitializeRequestSchema), `the SDK passes what is taken: ${what}`);
    }
  });

  test("initialize: malformed ones, and shapes the hand check does not know, are left to the SDK", () => {
    const left: [string, Msg][] = [
      ["roots a number", caps({ roots: 5 })],
      ["listChanged a string", caps({ roots: { listChanged: "yes" } })],
      ["sampling's context a boolean", caps({ sampling: { context: true } })],
      ["applyDefaults a number", caps({ elicitation: { form: { applyDefaults: 1 } } })],
      ["an experimental capability that is not an object", caps({ experimental: { x: 1 } })],
      ["tasks' requests malformed", caps({ tasks: { requests: { sampling: { createMessage: 1 } } } })],
      ["capabilities an array", caps([])],
      ["capabilities missing", init({ capabilities: undefined })],
      ["no client version", init({ clientInfo: { name: "c" } })],
      ["client icons (not checked by hand)", init({ clientInfo: { name: "c", version: "1", icons: [] } })],
      ["a protocol version that is not a string", init({ protocolVersion: 20250618 })],
      ["_meta in params", init({ _meta: {} })],
      ["a member beside params", init({}, { extra: 1 })],
      ["a fractional id", init({}, { id: 1.5 })],
      ["no jsonrpc", init({}, { jsonrpc: undefined })],
    ];
    for (const [what, m] of left) assert.equal(plainInitialize(m), false, `left to the SDK: ${what}`);
  });

  test("tools/list: plain ones are taken and pass the SDK's schemas; others are left", () => {
    for (const m of [list(), list({ params: {} }), list({ params: { cursor: "c" } }), list({ id: "x" })]) {
      assert.ok(plainListTools(m), JSON.stringify(m));
      assert.ok(sdkPasses(m, ListToolsRequestSchema), JSON.stringify(m));
    }
    for (const m of [
      list({ params: { cursor: 5 } }),
      list({ params: { _meta: {} } }),
      list({ params: [] }),
      list({ extra: 1 }),
      list({ id: null }),
    ])
      assert.equal(plainListTools(m), false, JSON.stringify(m));
  });
});

/** The SDK's Server (as server.ts makes it) answering `messages` over an in-memory pair. */
async function sdkAnswers(host: Awaited<ReturnType<typeof fx.host>>, messages: Msg[], clientRoots: boolean) {
  const { server } = createMcpSession({ host, session: "sdk", clientRoots });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const answers: JSONRPCMessage[] = [];
  client.onmessage = (m) => void answers.push(m);
  await server.connect(serverSide);
  await client.start();
  for (const m of messages) await client.send(m as JSONRPCMessage);
  assert.ok(await waitFor(() => answers.length === messages.length), JSON.stringify(answers));
  await server.close();
  return answers;
}

/** The early answers to `messages`, each sent before the next is taken. */
async function earlyAnswers(host: Awaited<ReturnType<typeof fx.host>>, messages: Msg[], clientRoots: boolean) {
  const answers: JSONRPCMessage[] = [];
  let needed = 0;
  const early = new EarlyAnswers({
    host,
    session: "early",
    clientRoots,
    send: async (m) => void answers.push(m),
    need: () => void needed++,
  });
  for (const m of messages) early.take(m);
  assert.ok(await waitFor(() => answers.length === messages.length), JSON.stringify(answers));
  return { answers, needed, early };
}

describe("the early answers are the SDK's Server's", () => {
  for (const clientRoots of [false, true]) {
    test(`initialize and tools/list, ${clientRoots ? "roots from the client" : "with --root"}`, async () => {
      fx.write({ "a.txt": "a\n" });
      const host = await fx.host();
      for (const version of ["2025-06-18", "2024-11-05", "2099-01-01"]) {
        const messages = [init({ protocolVersion: version }), list()];
        const sdk = await sdkAnswers(host, messages, clientRoots);
        const { answers, needed, early } = await earlyAnswers(host, messages, clientRoots);
        assert.deepEqual(answers, sdk, version);
        assert.ok(
          (sdk[1] as unknown as { result: { tools: unknown[] } }).result.tools.length > 10,
          "tools were listed",
        );
        // tools/list answered: the SDK is called for (after the answer, on the next turn), once.
        assert.ok(await waitFor(() => needed === 1));
        assert.deepEqual(early.handOver(), { initialize: messages[0], held: [], listChanged: false });
      }
    });
  }

  test("a tools/list that fails is answered with the same error the SDK gives", async () => {
    const real = await fx.host();
    const failing = new Proxy(real, {
      get: (t, k) =>
        k === "tools"
          ? () => {
              throw new Error("the registry is gone");
            }
          : (Reflect.get(t, k) as unknown),
    });
    const messages = [init(), list()];
    const sdk = await sdkAnswers(failing, messages, false);
    const { answers } = await earlyAnswers(failing, messages, false);
    assert.deepEqual(answers, sdk);
    assert.deepEqual((answers[1] as unknown as { error: unknown }).error, {
      code: -32603,
      message: "the registry is gone",
    });
  });

  test("what it cannot answer is held in order for the SDK, and calls for it; initialized alone does not", async () => {
    const host = await fx.host();
    let needed = 0;
    const sent: JSONRPCMessage[] = [];
    const early = new EarlyAnswers({
      host,
      session: "held",
      clientRoots: false,
      send: async (m) => void sent.push(m),
      need: () => void needed++,
    });
    early.take(init());
    const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
    early.take(initialized);
    assert.equal(needed, 0, "notifications/initialized alone does not load the SDK");
    const ping = { jsonrpc: "2.0", id: 3, method: "ping" };
    early.take(ping);
    assert.equal(needed, 1, "a message only the SDK serves calls for it at once");
    early.take(list()); // once the SDK is called for, tools/list waits for it too: answers keep their order
    assert.deepEqual(early.handOver(), {
      initialize: init(),
      held: [initialized, ping, list()],
      listChanged: false,
    });
    assert.equal(sent.length, 1, "only initialize was answered early");
    assert.throws(() => early.take(ping), /after the SDK took over/);
  });
});

test("the config changes between the early tools/list and the SDK: the SDK is told to send tools/list_changed", async () => {
  const config = path.join(fx.base, "reload.toml");
  writeFileSync(config, '[envelopes.mine]\nextends = "default"\n');
  const host = await fx.host({ config: undefined, configPath: config, envelope: "mine" });
  const { answers, early } = await earlyAnswers(host, [init(), list()], false);
  assert.ok(
    (answers[1] as unknown as { result: { tools: { name: string }[] } }).result.tools.some(
      (t) => t.name === "write_file",
    ),
  );
  writeFileSync(config, '[envelopes.mine]\nextends = "read_only"\n');
  assert.equal((await host.reload()).changed, true);
  assert.equal(early.handOver().listChanged, true);
});

describe("over real stdio", () => {
  const args = (state: string) => ["--root", fx.root, "--state-dir", path.join(fx.base, state), "--yes"];

  test("a client that pipelines initialize, tools/list, a call and a ping gets every answer", async () => {
    fx.write({ "p.txt": "piped\n" });
    const s = new RawStdio(args("st-pipe"));
    try {
      s.write(
        [
          JSON.stringify(init()),
          JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
          JSON.stringify(list()),
          JSON.stringify({
            jsonrpc: "2.0",
            id: 3,
            method: "tools/call",
            params: { name: "read_file", arguments: { path: "p.txt" } },
          }),
          JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }),
          JSON.stringify(list({ id: 5 })),
        ].join("\n"),
      );
      const [a1, a2, a3, a4, a5] = await Promise.all([1, 2, 3, 4, 5].map((id) => s.reply(id)));
      assert.equal(a1.result.serverInfo.name, "latch");
      assert.ok(a2.result.tools.some((t: { name: string }) => t.name === "read_file"));
      assert.match(a3.result.content[0].text, /piped/);
      assert.deepEqual(a4.result, {});
      // The second tools/list went through the SDK's handler: the same list.
      assert.deepEqual(a5.result, a2.result);
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("a malformed initialize is refused by the SDK's schema, as before (-32602)", async () => {
    const s = new RawStdio(args("st-bad"));
    try {
      s.send(caps({ roots: 5 }));
      const r = await s.reply(1);
      assert.equal(r.error?.code, -32602, JSON.stringify(r));
      assert.match(r.error.message, /capabilities\.roots/);
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("the SDK takes in the client's capabilities from the initialize answered early: its roots are asked for", async () => {
    // Without --root, a client declaring roots is asked for them once initialized.
    fx.write({ "p.txt": "piped\n" });
    const s = new RawStdio(["--state-dir", path.join(fx.base, "st-roots"), "--yes"], {}, fx.root);
    try {
      s.write([JSON.stringify(caps({ roots: { listChanged: true } })), JSON.stringify(list())].join("\n"));
      await s.reply(2);
      s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      const asked = () => s.replies.find((m) => (m as { method?: string }).method === "roots/list") as Msg | undefined;
      assert.ok(await waitFor(() => asked() !== undefined), JSON.stringify(s.replies));
      s.send({ jsonrpc: "2.0", id: asked()!.id, result: { roots: [{ uri: `file://${fx.root}` }] } });
      const r = await s.request(6, "tools/call", { name: "read_file", arguments: { path: "p.txt" } });
      assert.match(r.result.content[0].text, /piped/, JSON.stringify(r));
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });
});
