// The same call cycle over real stdio (the built `latch mcp` spawned by the SDK's client) and over
// real HTTP: list tools, read, edit, grep, a shell call, a refusal, an approval by elicitation
// accepted, and another declined. Then cancellation of a running shell call.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import {
  fieldsOf,
  httpClient,
  startHttpServer,
  stdioClient,
  type HttpServerProc,
  type ToolResult,
} from "../helpers/mcp.js";

type Out = ToolResult & { content: { type: string; text: string }[] };
const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as Out;

async function cycle(client: Client, fx: Fixture, asked: string[], answers: boolean[]): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const n of ["read_file", "edit_file", "grep", "local_shell"])
    assert.ok(names.includes(n), `${n} in ${names.join(", ")}`);

  const read = await call(client, "read_file", { path: "notes.txt" });
  assert.equal(fieldsOf(read).content, "alpha\nbeta\n");
  assert.match(read.content[0].text, /alpha\nbeta/);

  // The `default` envelope asks a person before writes: accepted, then declined.
  answers.push(true);
  const edit = await call(client, "edit_file", { path: "notes.txt", old_string: "beta", new_string: "gamma" });
  assert.equal(edit.isError, undefined, JSON.stringify(edit));
  assert.equal(readFileSync(path.join(fx.root, "notes.txt"), "utf8"), "alpha\ngamma\n");
  assert.match(asked.at(-1)!, /edit_file/);
  assert.match(asked.at(-1)!, /-beta\n\+gamma/, "the person saw the exact diff");

  answers.push(false);
  const declined = await call(client, "edit_file", { path: "notes.txt", old_string: "gamma", new_string: "delta" });
  assert.equal(declined.isError, true);
  assert.match(declined.content[0].text, /^Refused: /);
  assert.equal(readFileSync(path.join(fx.root, "notes.txt"), "utf8"), "alpha\ngamma\n");

  const grep = await call(client, "grep", { pattern: "gamma" });
  assert.equal(grep.isError, undefined, JSON.stringify(grep));
  assert.match(fieldsOf(grep).results, /notes\.txt:2: gamma/);

  const shell = await call(client, "local_shell", { command: "ls" });
  assert.equal(shell.isError, undefined, JSON.stringify(shell));
  assert.match(fieldsOf(shell).stdout, /notes\.txt/);

  const refusal = await call(client, "read_file", { path: "../outside.txt" });
  assert.equal(refusal.isError, true);
  assert.match(refusal.content[0].text, /^Refused: .*outside the workspace/);
  assert.doesNotMatch(JSON.stringify(refusal), /SECRET/);
}

function setup(): Fixture {
  const fx = makeFixture();
  fx.write({ "notes.txt": "alpha\nbeta\n" });
  writeFileSync(path.join(fx.base, "outside.txt"), "SECRET\n");
  return fx;
}

describe("the call cycle over stdio", () => {
  const fx = setup();
  after(() => fx.cleanup());
  test("list, read, edit approved, edit declined, grep, shell, refusal", async () => {
    const asked: string[] = [];
    const answers: boolean[] = [];
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--envelope", "default"], (m) => {
      asked.push(m);
      return answers.shift() ?? false;
    });
    try {
      await cycle(client, fx, asked, answers);
    } finally {
      await client.close();
    }
  });
});

describe("the call cycle over HTTP", () => {
  const fx = setup();
  let server: HttpServerProc;
  before(async () => {
    server = await startHttpServer(["--root", fx.root, "--state-dir", fx.state, "--envelope", "default"]);
  });
  after(async () => {
    await server.stop();
    fx.cleanup();
  });
  test("list, read, edit approved, edit declined, grep, shell, refusal", async () => {
    const asked: string[] = [];
    const answers: boolean[] = [];
    const client = await httpClient(server, (m) => {
      asked.push(m);
      return answers.shift() ?? false;
    });
    try {
      await cycle(client, fx, asked, answers);
    } finally {
      await client.close();
    }
  });
});

describe("progress", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  test("grep, find_files, count_stats and local_shell send progress when the client asks for it", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`src/m${i}.ts`] = `export const v${i} = "needle";\n`;
    fx.write(files);
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    try {
      const calls: [string, Record<string, unknown>][] = [
        ["grep", { pattern: "needle" }],
        ["find_files", { pattern: "*.ts" }],
        ["count_stats", { path: "." }],
        ["local_shell", { command: "ls src" }],
      ];
      for (const [name, args] of calls) {
        const seen: unknown[] = [];
        const out = await client.callTool({ name, arguments: args }, undefined, { onprogress: (p) => seen.push(p) });
        assert.equal(out.isError, undefined, `${name}: ${JSON.stringify(out).slice(0, 300)}`);
        assert.ok(seen.length > 0, `${name} sent no progress`);
      }
    } finally {
      await client.close();
    }
  });
});

describe("cancellation", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  test("cancelling a `sleep 30` shell call returns and leaves no process within 1 s", async () => {
    mkdirSync(path.join(fx.root, "d"), { recursive: true });
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    const marker = "30.4159"; // a sleep no other process runs
    const ctl = new AbortController();
    const running = client.callTool(
      { name: "local_shell", arguments: { command: "sleep", args: [marker] } },
      undefined,
      { signal: ctl.signal, timeout: 60_000 },
    );
    const sleeping = () =>
      execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
        .split("\n")
        .filter((l) => l.trim() === `sleep ${marker}`);
    for (let i = 0; i < 100 && sleeping().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(sleeping().length, 1, "the sleep started");
    const t0 = Date.now();
    ctl.abort();
    await assert.rejects(running);
    let gone = false;
    while (Date.now() - t0 < 1000 && !gone) {
      gone = sleeping().length === 0;
      if (!gone) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(gone, "no sleep process left 1 s after the cancel");
    await client.close();
  });
});
