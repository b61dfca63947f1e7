// The docs' client configs work as written: every JSON config and every `claude mcp add` /
// `gemini mcp add` line in docs/clients.md and on the README's front page is taken from them, its latch command is
// started (with `latch` meaning the built CLI, and /path/to/project a fixture) and must list the tools
// to the SDK's client; HTTP entries are connected to a running `latch mcp --http`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { startHttpServer } from "../helpers/mcp.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const section = ["README.md", "docs/clients.md"].map((f) => readFileSync(path.join(REPO, f), "utf8")).join("\n");
const fx = makeFixture();
after(() => fx.cleanup());

type Entry = { command?: string; args?: string[]; type?: string; url?: string; headers?: Record<string, string> };

function entries(): { where: string; entry: Entry }[] {
  const out: { where: string; entry: Entry }[] = [];
  for (const m of section.matchAll(/```json\n([\s\S]*?)```/g)) {
    const cfg = JSON.parse(m[1]) as { mcpServers?: Record<string, Entry>; servers?: Record<string, Entry> };
    for (const [name, entry] of Object.entries({ ...cfg.mcpServers, ...cfg.servers }))
      out.push({ where: `${name} in ${m[1].slice(0, 60).replace(/\s+/g, " ")}`, entry });
  }
  for (const m of section.matchAll(
    /^(?:claude mcp add (?:--\S+ )*latch -- |gemini mcp add (?:--\S+ )*latch )(latch .*?)\s*(?:#.*)?$/gm,
  )) {
    const [command, ...args] = m[1].split(/\s+/);
    out.push({ where: m[0], entry: { command, args } });
  }
  return out;
}

async function lists(client: Client, where: string): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("read_file"), `${where}: ${names.join(", ")}`);
  await client.close();
}

test("the docs have configs for each client section, and each stdio one starts a latch that lists tools", async () => {
  const all = entries();
  const stdio = all.filter((e) => e.entry.command);
  assert.ok(stdio.length >= 6, `found ${stdio.length}: ${all.map((e) => e.where).join(" | ")}`);
  for (const { where, entry } of stdio) {
    assert.equal(entry.command, "latch", where);
    const args = (entry.args ?? []).map((a) => (a === "/path/to/project" ? fx.root : a));
    const client = new Client({ name: "readme", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, ...args, "--state-dir", fx.state],
        cwd: fx.root,
        stderr: "pipe",
      }),
    );
    await lists(client, where);
  }
});

test("the docs' HTTP config connects to a running latch mcp --http", async () => {
  const http = entries().filter((e) => e.entry.type === "http");
  assert.ok(http.length >= 1);
  const server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state]);
  try {
    for (const { where, entry } of http) {
      assert.equal(new URL(entry.url!).pathname, "/mcp", where);
      const auth = entry.headers!.Authorization.replace(/\$\{input:[^}]+\}/, server.token);
      assert.match(auth, /^Bearer /);
      const client = new Client({ name: "readme-http", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: auth } } }),
      );
      await lists(client, where);
    }
  } finally {
    await server.stop();
  }
});
