// What the model sees of every tool — name, description, JSON Schema, annotations — is pinned here.
// A change to any of it fails this test until the snapshot is rewritten on purpose:
//   UPDATE_SNAPSHOTS=1 node --import tsx --test test/registry.test.ts
import assert from "node:assert/strict";
import { test } from "node:test";
import { findTool, inputSchema, TOOLS } from "../src/registry.js";
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
