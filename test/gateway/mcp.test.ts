// Attached servers as an MCP client sees them: the built `latch mcp`, spawned by the SDK's client over
// stdio, lists `<server>__<tool>` beside its own tools, runs what the envelope allows, refuses what it
// denies, and writes a log `latch log verify` accepts. Real upstreams: the hostile fixture and
// server-everything, contained.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CLI, runCli } from "../helpers/cli.js";
import { stdioClient } from "../helpers/mcp.js";
import { EVERYTHING, HOSTILE, envelope, gatewayFixture, nodeServer } from "./gateway-fixture.js";

const fx = gatewayFixture("latch-gw-mcp-");
after(() => fx.cleanup());

async function latchMcp(toml: string, log: string): Promise<Client> {
  const config = path.join(fx.base, `${path.basename(log)}.toml`);
  writeFileSync(config, toml);
  const at = ["--root", fx.root, "--state-dir", fx.state, "--config", config];
  const env = { HOME: fx.home, LATCH_APPROVAL_WAIT: "0" };
  // A person reviews and pins each server's tools first (test/gateway/pins.test.ts covers what is not pinned).
  for (const server of ["hostile", "everything"]) {
    const approved = await runCli(["servers", "approve", server, ...at], { env });
    assert.equal(approved.code, 0, approved.stdout + approved.stderr);
  }
  return stdioClient([...at, "--envelope", "gw", "--policy-log", log], undefined, env);
}

const textOf = (r: Awaited<ReturnType<Client["callTool"]>>) =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

test("latch mcp lists attached tools as <server>__<tool>, runs what the envelope allows, refuses the rest, log verifies", async () => {
  const log = path.join(fx.base, "mcp.jsonl");
  const toml =
    nodeServer("hostile", HOSTILE) +
    nodeServer("everything", EVERYTHING) +
    envelope({ everything__echo: "allow", hostile__echo: "allow", hostile__poisoned: "deny" });
  const client = await latchMcp(toml, log);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("read_file"), "latch's own tools stay");
    assert.ok(names.includes("everything__echo") && names.includes("hostile__echo"), names.join(", "));
    assert.ok(!names.includes("hostile__poisoned"), "a tool the envelope denies outright is not listed");
    const echoed = await client.callTool({ name: "everything__echo", arguments: { message: "through latch" } });
    assert.ok(!echoed.isError, textOf(echoed));
    assert.match(textOf(echoed), /through latch/);
    const denied = await client.callTool({ name: "hostile__poisoned", arguments: { a: 1, notes: "x" } });
    assert.equal(denied.isError, true);
    assert.match(textOf(denied), /Refused: .*tools\."hostile__poisoned" = deny/);
    // Not named: default_action (approve), and this client cannot be asked (no elicitation).
    const unnamed = await client.callTool({ name: "hostile__touch", arguments: { path: "/tmp/x" } });
    assert.equal(unnamed.isError, true);
    assert.match(textOf(unnamed), /Refused/);
  } finally {
    await client.close();
  }
  const verify = await runCli(["log", "verify", "--state-dir", fx.state, log]);
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
});

const INSPECTOR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../node_modules/.bin/mcp-inspector");

test("the MCP Inspector CLI calls an attached tool through latch mcp; the envelope still decides", async () => {
  const config = path.join(fx.base, "inspector.toml");
  writeFileSync(config, nodeServer("everything", EVERYTHING) + envelope({ everything__echo: "allow" }));
  const at = ["--root", fx.root, "--state-dir", fx.state, "--config", config];
  const env = { ...process.env, HOME: fx.home, LATCH_APPROVAL_WAIT: "0", LATCH_CONFIG: config };
  assert.equal((await runCli(["servers", "approve", "everything", ...at], { env })).code, 0);
  // The Inspector takes `--config` for itself: latch reads its config from LATCH_CONFIG here.
  const server = [process.execPath, CLI, "mcp", "--root", fx.root, "--state-dir", fx.state, "--envelope", "gw"];
  const run = promisify(execFile);
  const call = (cfg: string) =>
    run(
      INSPECTOR,
      [
        "--cli",
        ...server,
        "--method",
        "tools/call",
        "--tool-name",
        "everything__echo",
        "--tool-arg",
        "message=via inspector",
      ],
      { cwd: fx.base, env: { ...env, LATCH_CONFIG: cfg }, timeout: 60_000 },
    );
  const echoed = JSON.parse((await call(config)).stdout);
  assert.equal(echoed.isError, undefined, JSON.stringify(echoed));
  assert.match(echoed.content[0].text, /via inspector/);
  // The same call where no envelope rule names it: default_action (approve), and nobody to ask.
  const unnamed = path.join(fx.base, "inspector-unnamed.toml");
  writeFileSync(unnamed, nodeServer("everything", EVERYTHING) + envelope({}));
  const refused = JSON.parse((await call(unnamed)).stdout);
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.match(refused.content[0].text, /Refused: .*default_action = approve/);
});
