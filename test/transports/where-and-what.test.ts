// The model is told where it is (the workspace, and the allowed folder) in the instructions, over stdio
// and HTTP; tools the envelope denies whatever their arguments are not listed; and the CLI's misleading
// messages are fixed (`latch mcp --help`'s default posture, `latch config check --config`).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { httpClient, modelView, startHttpServer, stdioClient, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
mkdirSync(path.join(fx.root, "src"));
const config = path.join(fx.base, "agents.toml");
writeFileSync(
  config,
  [
    "[tools_policies.local_fs]",
    '_allowed_dir = "src"',
    "[envelopes.review]",
    'extends = "read_only"',
    "[envelopes.review.files.write]",
    'approve_paths = ["docs/**"]',
    "",
  ].join("\n"),
);

test("stdio with --root and HTTP: the instructions name the workspace and the envelope", async () => {
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state]);
  try {
    assert.match(
      client.getInstructions() ?? "",
      new RegExp(`^Workspace: ${fx.root}\\. Relative paths resolve there`, "m"),
    );
    assert.match(client.getInstructions() ?? "", /^Envelope \(approval rules\): auto_edit/m);
  } finally {
    await client.close();
  }
  const server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--envelope", "strict"]);
  try {
    const http = await httpClient(server);
    assert.match(http.getInstructions() ?? "", new RegExp(`^Workspace: ${fx.root}\\.`, "m"));
    assert.match(http.getInstructions() ?? "", /^Envelope \(approval rules\): strict/m);
    await http.close();
  } finally {
    await server.stop();
  }
});

test("with _allowed_dir, the instructions name the allowed folder and its workspace", async () => {
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--config", config]);
  try {
    const text = client.getInstructions() ?? "";
    assert.match(text, new RegExp(`^Workspace: ${path.join(fx.root, "src")}\\.`, "m"));
    assert.match(text, new RegExp(`_allowed_dir limits them to this folder of ${fx.root}\\)`));
  } finally {
    await client.close();
  }
});

test("stdio without --root: the instructions say the workspace comes from the client's roots", async () => {
  const client = await stdioClient(["--state-dir", fx.state]);
  try {
    assert.match(client.getInstructions() ?? "", /^Workspace: the folders your MCP client offers as roots, else /m);
  } finally {
    await client.close();
  }
});

test("read_only: the write tools and the shell are not listed, and a call to one is still a policy refusal", async () => {
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--envelope", "read_only"]);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const hidden of ["write_file", "edit_file", "sed", "local_shell"]) assert.ok(!names.includes(hidden), hidden);
    for (const shown of ["read_file", "grep", "list_dir"]) assert.ok(names.includes(shown), shown);
    const r = (await client.callTool({
      name: "write_file",
      arguments: { path: "x.txt", content: "x" },
    })) as ToolResult;
    assert.equal(r.isError, true);
    assert.match(modelView(r), /^Refused: envelope read_only/);
  } finally {
    await client.close();
  }
  const all = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--envelope", "default"]);
  try {
    const names = (await all.listTools()).tools.map((t) => t.name);
    for (const t of ["write_file", "edit_file", "sed", "local_shell"]) assert.ok(names.includes(t), t);
  } finally {
    await all.close();
  }
});

test("an envelope that denies writes but asks for some paths keeps the write tools listed", async () => {
  const client = await stdioClient([
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--config",
    config,
    "--envelope",
    "review",
  ]);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("write_file"), names.join(", "));
    assert.ok(!names.includes("local_shell"));
  } finally {
    await client.close();
  }
});

test("latch mcp --help names its own default posture; latch config check takes --config", async () => {
  const help = await runCli(["mcp", "--help"]);
  assert.match(
    help.stdout.replace(/\s+/g, " "),
    /\(default: LATCH_DEFAULT_AUTHORIZATION, else allow-unless-forbidden\)/,
  );
  const callHelp = await runCli(["call", "--help"]);
  assert.match(callHelp.stdout.replace(/\s+/g, " "), /\(default: deny-unless-allowed\)/);
  const check = await runCli(["config", "check", "--config", config]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, new RegExp(`${config}: ok`));
});
