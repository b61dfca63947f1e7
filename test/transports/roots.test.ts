// Every MCP root the client offers is served, through the one resolver: relative paths resolve in the
// first root, an absolute path in another root plans its call there (the visibility rule and the control
// plane hold in every root), a call that names two roots is refused, and roots/list_changed is followed
// before the next call, so a root the client removed is refused at once. With --root, the operator's
// folder is served and the client's roots are not.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, modelView, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());
const a = fx.root;
const b = path.join(fx.base, "second");
const outside = path.join(fx.base, "outside");
// The state dir lives inside the second root: latch's control plane, refused there too.
const state = path.join(b, ".latch-state");
for (const d of [b, outside]) mkdirSync(d);
fx.write({ "a.txt": "in the first root\n" });
writeFileSync(path.join(b, "b.txt"), "in the second root\n");
writeFileSync(path.join(b, "only-b.txt"), "only here\n");
mkdirSync(path.join(b, "node_modules"));
writeFileSync(path.join(b, "node_modules", "dep.txt"), "needle in a denied folder\n");
writeFileSync(path.join(b, "found.txt"), "needle in the open\n");
writeFileSync(path.join(outside, "o.txt"), "outside every root\n");
const config = path.join(fx.base, "agents.toml");
writeFileSync(config, '[tools_policies.local_fs]\n_denied_path_substrings = "node_modules"\n');

/** A client that offers `roots()` (changeable) and can announce a change. */
async function rootsClient(roots: () => string[], extra: string[] = []): Promise<Client> {
  const client = new Client({ name: "roots-client", version: "1" }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: roots().map((r, i) => ({ uri: pathToFileURL(r).href, name: `root${i}` })),
  }));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--state-dir", state, "--config", config, "--envelope", "default", ...extra],
      cwd: outside,
      stderr: "pipe",
    }),
  );
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

test("two roots: relative paths in the first, absolute ones in the second, the visibility rule and control plane in both", async () => {
  const client = await rootsClient(() => [a, b]);
  try {
    assert.equal(fieldsOf(await call(client, "read_file", { path: "a.txt" })).content, "in the first root\n");
    const second = await call(client, "read_file", { path: path.join(b, "b.txt") });
    assert.equal(second.isError, undefined, modelView(second));
    assert.equal(fieldsOf(second).content, "in the second root\n");

    // A walk in the second root passes every entry through the visibility rule of that root.
    const grep = await call(client, "grep", { pattern: "needle", path: b });
    assert.equal(grep.isError, undefined, modelView(grep));
    assert.match(modelView(grep), /found\.txt/);
    assert.doesNotMatch(modelView(grep), /dep\.txt/);
    const denied = await call(client, "read_file", { path: path.join(b, "node_modules", "dep.txt") });
    assert.equal(denied.isError, true);
    assert.match(modelView(denied), /denied path substring `node_modules`/);
    const plane = await call(client, "list_dir", { path: state });
    assert.equal(plane.isError, true);
    assert.match(modelView(plane), /control plane/);

    // The shell works in the second root with cwd there.
    const ls = await call(client, "local_shell", { command: "ls", cwd: b });
    assert.equal(ls.isError, undefined, modelView(ls));
    assert.match(fieldsOf(ls).stdout, /only-b\.txt/);

    // A tool that reports paths one by one works in the other root too.
    const many = await call(client, "read_many_files", { paths: [path.join(b, "b.txt"), path.join(b, "only-b.txt")] });
    assert.equal(many.isError, undefined, modelView(many));
    assert.deepEqual(fieldsOf(many).unreadable ?? [], [], modelView(many));

    // A relative path that exists only in the other root: the error says how to reach it.
    const missing = await call(client, "read_file", { path: "only-b.txt" });
    assert.equal(missing.isError, true);
    assert.match(
      modelView(missing),
      new RegExp(`another root latch serves: write it absolute, \`${path.join(b, "only-b.txt")}\``),
    );

    // One call, two roots: the path in the other root is refused (read_many_files says so per file).
    const both = await call(client, "read_many_files", { paths: ["a.txt", path.join(b, "b.txt")] });
    assert.equal(both.isError, undefined, modelView(both));
    assert.deepEqual(fieldsOf(both).unreadable, [
      `${path.join(b, "b.txt")}: \`${path.join(b, "b.txt")}\` is in the root ${b}, while this call also names a path in ${a}: a call works in one root.`,
    ]);

    const far = await call(client, "read_file", { path: path.join(outside, "o.txt") });
    assert.equal(far.isError, true);
    assert.match(modelView(far), new RegExp(`outside every root latch serves: ${a}, ${b}`));
  } finally {
    await client.close();
  }
});

test("roots/list_changed: a removed root is refused at once, and a new first root takes relative paths", async () => {
  let roots = [a, b];
  const client = await rootsClient(() => roots);
  try {
    const before = await call(client, "read_file", { path: path.join(b, "b.txt") });
    assert.equal(before.isError, undefined, modelView(before));

    roots = [a];
    await client.sendRootsListChanged();
    const removed = await call(client, "read_file", { path: path.join(b, "b.txt") });
    assert.equal(removed.isError, true, "a root the client removed is not served");
    assert.match(modelView(removed), new RegExp(`outside the workspace ${a}`));

    roots = [b];
    await client.sendRootsListChanged();
    assert.equal(fieldsOf(await call(client, "read_file", { path: "only-b.txt" })).content, "only here\n");
    const gone = await call(client, "read_file", { path: path.join(a, "a.txt") });
    assert.equal(gone.isError, true);

    roots = [];
    await client.sendRootsListChanged();
    const none = await call(client, "read_file", { path: "b.txt" });
    assert.equal(none.isError, true);
    assert.match(modelView(none), /No folder is served: your MCP client offers no root now/);
  } finally {
    await client.close();
  }
});

test("with --root, the client's roots are not served: a root outside the operator's folder is refused", async () => {
  const client = await rootsClient(() => [a, b], ["--root", a]);
  try {
    assert.equal(fieldsOf(await call(client, "read_file", { path: "a.txt" })).content, "in the first root\n");
    const other = await call(client, "read_file", { path: path.join(b, "b.txt") });
    assert.equal(other.isError, true);
    assert.match(modelView(other), new RegExp(`outside the workspace ${a}`));
  } finally {
    await client.close();
  }
});
