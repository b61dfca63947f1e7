// When the envelope changes mid-run, the client hears tools/list_changed: `latch mcp` follows its
// config file, loads it again when it changes on disk (logged as config_reloaded), lists only what the
// new envelope lets run, and keeps the previous config when an edit is invalid. Over stdio and HTTP.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { httpClient, modelView, newClient, startHttpServer, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
const at = ["--root", fx.root, "--state-dir", fx.state];
const flags = (config: string) => [...at, "--config", config, "--envelope", "mine"];
const envelope = (base: string) => `[envelopes.mine]\nextends = "${base}"\n`;

/** Resolves at the next tools/list_changed; a bounded wait so a missing notification fails, not hangs. */
function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no tools/list_changed within 20 s")), 20_000);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      clearTimeout(t);
      resolve();
    });
  });
}

const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);

test("stdio: the config's envelope changes on disk: tools/list_changed, the new listing, the change on record", async () => {
  const config = path.join(fx.base, "stdio.toml");
  const log = path.join(fx.base, "stdio-policy.jsonl");
  writeFileSync(config, envelope("default"));
  const client = newClient();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...flags(config), "--policy-log", log],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  await client.connect(transport);
  try {
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
    assert.ok((await names(client)).includes("write_file"));

    // An invalid edit first: nothing changes, stderr says why; then a valid one is announced.
    const changed = nextListChanged(client);
    writeFileSync(config, "[envelopes.mine\n");
    await waitFor(
      () => /changed but was not loaded/.test(stderr),
      () => stderr,
    );
    assert.ok((await names(client)).includes("write_file"), "an invalid config keeps the previous one in force");
    writeFileSync(config, envelope("read_only"));
    await changed;

    const now = await names(client);
    for (const hidden of ["write_file", "edit_file", "local_shell"]) assert.ok(!now.includes(hidden), hidden);
    assert.ok(now.includes("read_file"));
    const w = (await client.callTool({ name: "write_file", arguments: { path: "x.txt", content: "x" } })) as ToolResult;
    assert.equal(w.isError, true);
    assert.match(modelView(w), /^Refused: envelope mine: files.write = deny/);
  } finally {
    await client.close();
  }
  const records = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { record: { type: string; envelope?: string; config_sha256?: string } }).record);
  const started = records.find((r) => r.type === "run_started");
  const reloads = records.filter((r) => r.type === "config_reloaded");
  assert.equal(reloads.length, 1, "one reload: the invalid edit is not on record");
  assert.equal(reloads[0].envelope, "mine");
  assert.notEqual(reloads[0].config_sha256, started?.config_sha256);
  const verify = await runCli(["log", "verify", "--state-dir", fx.state, log]);
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
});

test("HTTP: every open session hears tools/list_changed when the config changes", async () => {
  const config = path.join(fx.base, "http.toml");
  writeFileSync(config, envelope("default"));
  const server = await startHttpServer(flags(config));
  const one = await httpClient(server);
  const two = await httpClient(server);
  try {
    const heard = [nextListChanged(one), nextListChanged(two)];
    writeFileSync(config, envelope("read_only"));
    await Promise.all(heard);
    assert.ok(!(await names(two)).includes("write_file"));
  } finally {
    await one.close();
    await two.close();
    await server.stop();
  }
});

async function waitFor(ok: () => boolean, what: () => string): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(ok(), what());
}
