// The MCP Inspector's CLI (a real third-party client) lists latch's tools and calls read_file.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const INSPECTOR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../node_modules/.bin/mcp-inspector");

test("the MCP Inspector CLI lists the tools and reads a file through latch mcp", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "hello.txt": "hello from the workspace\n" });
  const run = promisify(execFile);
  const server = [process.execPath, CLI, "mcp", "--root", fx.root, "--state-dir", fx.state];
  const list = await run(INSPECTOR, ["--cli", ...server, "--method", "tools/list"], { cwd: fx.base, timeout: 60_000 });
  const tools = JSON.parse(list.stdout).tools as { name: string; annotations: Record<string, unknown> }[];
  const read = tools.find((t) => t.name === "read_file");
  assert.ok(read, list.stdout.slice(0, 500));
  assert.deepEqual(read.annotations, {
    title: "read_file",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  const call = await run(
    INSPECTOR,
    ["--cli", ...server, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=hello.txt"],
    { cwd: fx.base, timeout: 60_000 },
  );
  const result = JSON.parse(call.stdout);
  assert.equal(result.isError, undefined, call.stdout);
  assert.equal(result.structuredContent, undefined, "text only: clients that prefer structuredContent would show JSON");
  assert.match(result.content[0].text, /--- content ---\nhello from the workspace\n/);
});
