// The host shape from the command line: browse tools only, through the built CLI and `latch mcp`.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { stdioClient } from "../helpers/mcp.js";

const BROWSE = ["list_dir", "grep", "find_files", "stat_file", "count_stats", "outline", "ast_search"];
const fx = makeFixture("latch-shape-");
after(() => fx.cleanup());
const env = { HOME: fx.base, LATCH_STATE_DIR: fx.state };

test("`latch tools --shape host` lists the browse tools and nothing that writes or runs", async () => {
  const r = await runCli(["tools", "--json", "--shape", "host", "--root", fx.root], { env });
  assert.equal(r.code, 0, r.stderr);
  const names = (r.json as { name: string; annotations: { readOnly: boolean }; axis: string }[]).map((t) => t.name);
  for (const n of BROWSE) assert.ok(names.includes(n), `${n} in ${names.join(", ")}`);
  for (const n of ["read_file", "write_file", "edit_file", "sed", "local_shell", "run_tool", "hash_edit"])
    assert.ok(!names.includes(n), `${n} must not be listed in the host shape`);
});

test("`latch mcp --shape host` serves only the browse tools; a write tool is not offered", async () => {
  fx.write({ "a.txt": "hello\n" });
  const client = await stdioClient(["--shape", "host", "--root", fx.root], undefined, env);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of BROWSE) assert.ok(names.includes(n), `${n} in ${names.join(", ")}`);
    assert.ok(
      tools.every((t) => t.annotations?.readOnlyHint === true),
      names.join(", "),
    );
    const write = await client.callTool({ name: "write_file", arguments: { path: "b.txt", content: "x" } });
    assert.equal(write.isError, true);
    assert.equal(existsSync(path.join(fx.root, "b.txt")), false);
    const grep = await client.callTool({ name: "grep", arguments: { pattern: "hello" } });
    assert.notEqual(grep.isError, true);
  } finally {
    await client.close();
  }
});

test("`--shape client` on the command line says it needs an ACP client", async () => {
  const r = await runCli(["tools", "--shape", "client", "--root", fx.root], { env });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /client shape needs an ACP client/);
});
