// What a command that is not `latch mcp` loads: the program's static imports (src/cli/program.ts and
// every module it reaches without an import()) hold no value import of the MCP SDK, so `latch call`,
// `tools` and `explain` do not evaluate its protocol's zod schemas (~8 ms of each start, issue 32);
// `latch mcp` imports its transports in its action, and over stdio answers the client's first
// initialize and tools/list before it imports the SDK (src/transports/mcp/early.ts). The bundle keeps
// the same graph: esbuild leaves a module reached only through import() unevaluated until that import()
// runs (scripts/bundle.mjs). A later `latch mcp` answers those two before the program loads at all
// (src/transports/mcp/answer-cache.ts, imported by the entry): its own imports stay node's and a few files.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { importsOf } from "../helpers/imports.js";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");
const SDK = /^@modelcontextprotocol\/sdk(\/|$)/;

/** The packages each module in the static closure of `entry` imports, by module (relative to src/). */
function closure(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (packages.has(path.relative(SRC, file))) continue;
    // What runs when the file loads: its static value imports (a type-only one, or an import(), does not).
    const loads = importsOf(file, readFileSync(file, "utf8")).filter((i) => !i.typeOnly && !i.dynamic);
    packages.set(
      path.relative(SRC, file),
      loads.filter((i) => !i.relative).map((i) => i.to),
    );
    for (const i of loads.filter((l) => l.relative)) {
      assert.ok(existsSync(i.to), `${path.relative(SRC, file)} imports ${i.to}, which is not in src/`);
      todo.push(i.to);
    }
  }
  return packages;
}

const sdkUsers = (c: Map<string, string[]>) =>
  [...c].filter(([, pkgs]) => pkgs.some((p) => SDK.test(p))).map(([file]) => file);

test("the program's static imports hold no value import of the MCP SDK: latch call, tools and explain do not load it", () => {
  const program = closure(path.join(SRC, "cli/program.ts"));
  assert.ok(program.size > 50, `the walk found the program's modules (${program.size})`);
  assert.ok(program.has("cli/mcp.ts") && program.has("registry.ts"), "the walk follows the program's imports");
  assert.deepEqual(sdkUsers(program), [], "modules the program loads at start that import the MCP SDK");
});

test("the program's static imports load no HTTP server or client, nor the resolver: a call's start leaves them out", () => {
  // node:http (and with it net's servers, dns/promises) for the console's server and the call proxy
  // alone, each imported where it is used (cli/console.ts, host/network.ts): ~5 ms of every start.
  const program = closure(path.join(SRC, "cli/program.ts"));
  const loaders = [...program]
    .filter(([, pkgs]) => pkgs.some((p) => /^node:(http|https|dns|dns\/promises)$/.test(p)))
    .map(([file]) => file);
  assert.ok(program.has("host/network.ts") && program.has("cli/console.ts"), "the walk reaches both importers");
  assert.deepEqual(loaders, [], "modules the program loads at start that import node:http or node:dns");
});

test("latch mcp over stdio answers its first messages before it loads the MCP SDK", () => {
  const stdio = closure(path.join(SRC, "transports/mcp/stdio.ts"));
  assert.ok(
    stdio.has("transports/mcp/early.ts") && stdio.has("transports/mcp/stdio-wire.ts"),
    "the walk follows stdio's imports",
  );
  assert.deepEqual(
    sdkUsers(stdio),
    [],
    "modules the stdio server loads before its first answers that import the MCP SDK",
  );
});

test("the entry's early answers (a later, an elsewhere or a plain first latch mcp start) load node's own modules and a few small files, not the program", () => {
  const early = closure(path.join(SRC, "transports/mcp/answer-cache.ts"));
  const packages = [...new Set([...early.values()].flat())].sort();
  assert.ok(
    packages.every((p) => p.startsWith("node:")),
    `packages loaded before the program: ${packages.join(", ")}`,
  );
  assert.ok(early.size <= 12, `modules loaded before the program: ${[...early.keys()].join(", ")}`);
  assert.ok(
    early.has("transports/mcp/stdin-reader.ts") &&
      early.has("transports/mcp/plain.ts") &&
      early.has("transports/mcp/plain-start.ts") &&
      early.has("transports/mcp/elsewhere.ts"),
    [...early.keys()].join(),
  );
});

test("the check finds the SDK where it is: the stdio server's SDK part imports it statically", () => {
  // The walks above would say nothing if they missed every import: here the same walk meets the SDK.
  const sdkPart = sdkUsers(closure(path.join(SRC, "transports/mcp/stdio-sdk.ts")));
  assert.ok(
    sdkPart.includes("transports/mcp/server.ts") && sdkPart.includes("transports/mcp/wire-checks.ts"),
    sdkPart.join(),
  );
  const read = (text: string) =>
    importsOf(path.join(SRC, "x.ts"), text)
      .filter((i) => !i.typeOnly && !i.dynamic)
      .map((i) => (i.relative ? path.relative(SRC, i.to) : i.to));
  assert.deepEqual(read('import type { A } from "x";\nimport { type B, type C } from "y";\n'), []);
  assert.deepEqual(read('import { type B, c } from "y";\nexport * from "./z.js";\nimport "w";\nawait import("v");\n'), [
    "y",
    "z.ts",
    "w",
  ]);
});
