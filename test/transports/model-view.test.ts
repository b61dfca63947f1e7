// What the model reads through a client that, like Claude Code, shows it `structuredContent` (as JSON)
// whenever a result carries one and drops the text: file contents and command output must still arrive
// verbatim, over stdio and over HTTP. And the arguments a client adds to every call on its own (Gemini
// CLI's `wait_for_previous`) are dropped, while an unknown argument from the model is still refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeFixture } from "../helpers/fixture.js";
import {
  fieldsOf,
  httpClient,
  modelView,
  startHttpServer,
  stdioClient,
  type HttpServerProc,
  type ToolResult,
} from "../helpers/mcp.js";

// Code full of escapes: quotes, backslashes, a tab, a literal "\n", a short single line too.
const TRICKY = 'const s = "a\\"b\\\\n";\n\treturn `${s}\\t`; // "quoted"\n';
const SHORT = 'x = "y"';

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

function suite(connect: (fx: ReturnType<typeof makeFixture>) => Promise<{ client: Client; stop(): Promise<void> }>) {
  const fx = makeFixture();
  fx.write({ "tricky.ts": TRICKY, "short.txt": SHORT });
  let client: Client;
  let stop: () => Promise<void>;
  before(async () => {
    const c = await connect(fx);
    client = c.client;
    stop = () => c.stop();
  });
  after(async () => {
    await stop();
    fx.cleanup();
  });

  test("read_file: the model sees the file's bytes unescaped, and no structuredContent", async () => {
    const r = await call(client, "read_file", { path: "tricky.ts" });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    assert.equal(r.structuredContent, undefined);
    assert.ok(modelView(r).includes(TRICKY), modelView(r));
    assert.equal(fieldsOf(r).content, TRICKY);
    const short = await call(client, "read_file", { path: "short.txt" });
    assert.ok(modelView(short).includes(`--- content ---\n${SHORT}`), modelView(short));
  });

  test("read_file_range and local_shell output reach the model verbatim", async () => {
    const range = await call(client, "read_file_range", { path: "tricky.ts", start_line: 2, end_line: 2 });
    assert.ok(modelView(range).includes(TRICKY.split("\n")[1]), modelView(range));
    const shell = await call(client, "local_shell", { command: "cat", args: ["tricky.ts"] });
    assert.equal(shell.isError, undefined, JSON.stringify(shell));
    assert.ok(modelView(shell).includes(`--- stdout ---\n${TRICKY}`), modelView(shell));
    assert.equal(fieldsOf(shell).exit_code, 0);
  });

  test("a refusal reaches the model as its text, not as JSON", async () => {
    const r = await call(client, "read_file", { path: "../outside.txt" });
    assert.equal(r.isError, true);
    assert.match(modelView(r), /^Refused: /);
  });

  test("Gemini CLI's wait_for_previous is accepted and ignored; an unknown model argument is refused", async () => {
    const ok = await call(client, "read_file", { path: "short.txt", force: true, wait_for_previous: true });
    assert.equal(ok.isError, undefined, JSON.stringify(ok));
    assert.equal(fieldsOf(ok).content, SHORT);
    const bad = await call(client, "read_file", { path: "short.txt", wait_for_previos: true });
    assert.equal(bad.isError, true);
    assert.match(modelView(bad), /Unknown argument `wait_for_previos` for read_file/);
  });
}

describe("the model's view over stdio", () => {
  suite(async (fx) => {
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    return { client, stop: () => client.close() };
  });
});

describe("the model's view over HTTP", () => {
  suite(async (fx) => {
    const server: HttpServerProc = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    const client = await httpClient(server);
    return {
      client,
      stop: async () => {
        await client.close();
        await server.stop();
      },
    };
  });
});
