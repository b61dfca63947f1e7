// What the model sees of every tool — name, description, JSON Schema, annotations — is pinned here.
// A change to any of it fails this test until the snapshot is rewritten on purpose:
//   UPDATE_SNAPSHOTS=1 node --import tsx --test test/registry.test.ts
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { findTool, inputSchema, TOOLS } from "../src/registry.js";
import { defineTool } from "../src/tools/define.js";
import { runCli } from "./helpers/cli.js";
import { matchSnapshot } from "./helpers/snapshot.js";

test("every tool's schema, description and annotations match the snapshot", () => {
  const now = TOOLS.map((t) => ({
    name: t.name,
    aliases: t.aliases,
    toolset: t.toolset,
    axis: t.axis,
    shapes: t.shapes,
    annotations: t.annotations,
    description: t.description,
    inputSchema: inputSchema(t),
  }));
  matchSnapshot("tools.json", now, "the tools");
});

test("every schema refuses unknown keys, and every name and alias finds its tool", () => {
  for (const t of TOOLS) {
    assert.equal(inputSchema(t).additionalProperties, false, t.name);
    for (const n of [t.name, ...t.aliases]) assert.equal(findTool(n), t, n);
    assert.ok(t.description.length > 40, `${t.name} needs a description a model can act on`);
  }
});

test("the bundled CLI lists the same schemas the source computes (scripts/bundle.mjs inlines them at build time)", async () => {
  const cli = await runCli(["tools", "--json"], { env: { EXA_API_KEY: "" } });
  assert.equal(cli.code, 0, cli.stderr);
  const listed = cli.json as { name: string; inputSchema: unknown }[];
  assert.deepEqual(
    listed.map((t) => t.name),
    TOOLS.map((t) => t.name).filter((n) => n !== "run_tool" && n !== "web_search"),
    "every tool but run_tool (it needs a catalog) and web_search (it needs EXA_API_KEY) is listed by default",
  );
  for (const t of listed) assert.deepEqual(t.inputSchema, inputSchema(findTool(t.name)!), t.name);
});

test("a tool's schema is made at its first use, once, and is the same object after", () => {
  let made = 0;
  const tool = defineTool({
    name: "probe",
    aliases: [],
    toolset: "local_fs",
    axis: "files.read",
    shapes: ["workspace"],
    annotations: { readOnly: true, destructive: false, idempotent: true },
    description: "a tool for this test",
    schema: () => (made++, z.strictObject({ path: z.string() })),
    plan: async () => ({ paths: [] }),
    run: async () => ({ result: {} }),
  });
  assert.equal(made, 0, "not when the tool is defined");
  const first = tool.schema;
  assert.equal(first.safeParse({ path: "a" }).success, true);
  assert.equal(first.safeParse({ path: "a", other: 1 }).success, false);
  assert.equal(tool.schema, first);
  assert.equal(made, 1);
  // Every built-in tool's schema is the same object at each use (a call's check, the JSON Schema).
  for (const t of TOOLS) assert.equal(t.schema, t.schema, t.name);
});
