// What the model reads through a client that, like Claude Code, shows it `structuredContent` (as JSON)
// whenever a result carries one and drops the text: file contents and command output must still arrive
// verbatim, over stdio and over HTTP. And the arguments a client adds to every call on its own (Gemini
// CLI's `wait_for_previous`) are dropped, and latch's log (stderr, at info) says so, while an unknown
// argument from the model is still refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeFixture } from "../helpers/fixture.js";
import {
  connectOver,
  fieldsOf,
  modelView,
  TRANSPORTS,
  type McpSession,
  type Transport,
  type ToolResult,
} from "../helpers/mcp.js";
import { waitFor } from "../helpers/wait.js";

// Code full of escapes: quotes, backslashes, a tab, a literal "\n", a short single line too.
const TRICKY = 'const s = "a\\"b\\\\n";\n\treturn `${s}\\t`; // "quoted"\n';
const SHORT = 'x = "y"';

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

function suite(transport: Transport) {
  const fx = makeFixture();
  fx.write({ "tricky.ts": TRICKY, "short.txt": SHORT });
  let session: McpSession;
  let client: Client;
  before(async () => {
    // At info, latch's log names what it ignores.
    session = await connectOver(transport, ["--root", fx.root, "--state-dir", fx.state, "--yes"], {
      env: { LATCH_LOG: "info" },
    });
    client = session.client;
  });
  after(async () => {
    await session.close();
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

  test("Gemini CLI's wait_for_previous is accepted, ignored and logged; an unknown model argument is refused", async () => {
    // latch logs each call's outcome after the line about what it ignored: wait for the outcome.
    const done = () => session.stderr().match(/^latch info: read_file → /gm)?.length ?? 0;
    const before = done();
    const ok = await call(client, "read_file", { path: "short.txt", force: true, wait_for_previous: true });
    assert.equal(ok.isError, undefined, JSON.stringify(ok));
    assert.equal(fieldsOf(ok).content, SHORT);
    await waitFor(() => done() > before);
    assert.match(session.stderr(), /^latch info: read_file: ignored `wait_for_previous` \(Gemini CLI\)$/m);
    const bad = await call(client, "read_file", { path: "short.txt", wait_for_previos: true });
    assert.equal(bad.isError, true);
    assert.match(modelView(bad), /Unknown argument `wait_for_previos` for read_file/);
    await waitFor(() => done() > before + 1);
    assert.doesNotMatch(session.stderr(), /ignored `wait_for_previos`/);
  });
}

for (const transport of TRANSPORTS) describe(`the model's view over ${transport}`, () => suite(transport));
