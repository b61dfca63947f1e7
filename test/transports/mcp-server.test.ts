// latch mcp's own duties: the client's root becomes the workspace, the instructions reach the model,
// stdout carries nothing but the protocol, and a non-loopback bind needs --allow-remote.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, stdioClient, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());

test("without --root, the first root the client offers is the workspace", async () => {
  const offered = path.join(fx.base, "client-root");
  mkdirSync(offered);
  writeFileSync(path.join(offered, "from-root.txt"), "served from the client's root\n");
  fx.write({ "from-cwd.txt": "served from the current folder\n" });
  const client = new Client(
    { name: "roots-client", version: "1" },
    { capabilities: { roots: { listChanged: false } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: pathToFileURL(offered).href, name: "project" }],
  }));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--state-dir", fx.state],
      cwd: fx.root,
      stderr: "pipe",
    }),
  );
  try {
    const inRoot = (await client.callTool({ name: "read_file", arguments: { path: "from-root.txt" } })) as {
      isError?: boolean;
    };
    assert.equal(inRoot.isError, undefined, JSON.stringify(inRoot));
    assert.equal(fieldsOf(inRoot as ToolResult).content, "served from the client's root\n");
    const cwdFile = (await client.callTool({ name: "read_file", arguments: { path: "from-cwd.txt" } })) as {
      isError?: boolean;
    };
    assert.equal(cwdFile.isError, true, "the current folder is not the workspace when the client offers a root");
  } finally {
    await client.close();
  }
});

test("without roots from the client, the current folder is the workspace", async () => {
  fx.write({ "here.txt": "here\n" });
  const client = new Client({ name: "plain", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--state-dir", fx.state],
      cwd: fx.root,
      stderr: "pipe",
    }),
  );
  try {
    const out = (await client.callTool({ name: "read_file", arguments: { path: "here.txt" } })) as unknown;
    assert.equal(fieldsOf(out as ToolResult).content, "here\n");
  } finally {
    await client.close();
  }
});

test("the initialize result carries the tool-use guidance, and debug logs stay off stdout", async () => {
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state], undefined, { LATCH_LOG: "debug" });
  try {
    const text = client.getInstructions() ?? "";
    assert.match(text, /Prefer the local_fs tools .* over the shell/);
    assert.match(text, /Read before editing/);
    assert.match(text, /Split compound shell lines/);
    assert.match(text, /do not retry the same call/);
    // With every log line on, the protocol still works: nothing but JSON-RPC reached stdout.
    const tools = await client.listTools();
    for (const t of tools.tools) {
      assert.equal(t.annotations?.openWorldHint, false);
      assert.equal(typeof t.annotations?.readOnlyHint, "boolean");
      assert.equal((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, false, t.name);
    }
    assert.equal(
      ((await client.callTool({ name: "read_file", arguments: { path: "here.txt" } })) as { isError?: boolean })
        .isError,
      undefined,
    );
  } finally {
    await client.close();
  }
});

test("a non-loopback --host needs --allow-remote", () => {
  const r = spawnSync(
    process.execPath,
    [CLI, "mcp", "--http", "--host", "0.0.0.0", "--port", "0", "--root", fx.root, "--state-dir", fx.state],
    { encoding: "utf8", timeout: 20_000 },
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /not a loopback address.*--allow-remote/);
});

test("when the client goes away, the run is closed: the policy log verifies, run_finished included", async () => {
  const logFile = path.join(fx.base, "mcp-run.log");
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--policy-log", logFile]);
  await client.callTool({ name: "read_file", arguments: { path: "here.txt" } });
  await client.close();
  let verify = spawnSync(process.execPath, [CLI, "log", "verify", "--state-dir", fx.state, logFile], {
    encoding: "utf8",
  });
  for (let i = 0; i < 50 && verify.status !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100)); // the server finishes its log as it exits
    verify = spawnSync(process.execPath, [CLI, "log", "verify", "--state-dir", fx.state, logFile], {
      encoding: "utf8",
    });
  }
  assert.equal(verify.status, 0, verify.stdout + verify.stderr);
  assert.match(readFileSync(logFile, "utf8"), /"run_finished"/);
});
