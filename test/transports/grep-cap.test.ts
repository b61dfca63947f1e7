// A capped grep is the first N matches in path order, the same from both engines (rg searches in
// parallel, so without care the cap kept whichever files it finished first), through `latch mcp` over
// stdio and over HTTP.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { connectOver, fieldsOf, TRANSPORTS, type ToolResult } from "../helpers/mcp.js";

const fx = makeFixture();
after(() => fx.cleanup());

const files: Record<string, string> = {};
// Folders whose names sort differently by whole path and by walk ("a-b/x" vs "a/x"), big and small files.
for (const d of ["a", "a-b", "b", "c", "z"])
  for (let f = 0; f < 8; f++)
    files[`${d}/f${f}.txt`] = Array.from({ length: 3 + f * 40 }, (_, l) => `hit ${d}${f} line ${l + 1}`).join("\n");
fx.write(files);
const config = path.join(fx.base, "agents.toml");
writeFileSync(config, '[tools_policies.local_fs]\n_max_grep_matches = "7"\n');
const expected = Array.from({ length: 3 }, (_, l) => `a/f0.txt:${l + 1}: hit a0 line ${l + 1}`).concat(
  Array.from({ length: 4 }, (_, l) => `a/f1.txt:${l + 1}: hit a1 line ${l + 1}`),
);

for (const transport of TRANSPORTS) {
  test(`${transport}: capped grep: the first 7 matches by path, identical from rg and the JS engine, run after run`, async () => {
    const seen = new Set<string>();
    for (const engine of ["rg", "js", "rg", "js", "rg"]) {
      const { client, close } = await connectOver(
        transport,
        ["--root", fx.root, "--state-dir", fx.state, "--config", config],
        { env: { LATCH_GREP_ENGINE: engine } },
      );
      try {
        const r = (await client.callTool({ name: "grep", arguments: { pattern: "hit" } })) as ToolResult;
        const f = fieldsOf(r);
        const lines = (f.results as string).split("\n").filter((l) => /^\S+:\d+: /.test(l));
        assert.deepEqual(lines, expected, `${engine}: ${f.results}`);
        assert.equal(f.truncated, true);
        seen.add(f.results as string);
      } finally {
        await close();
      }
    }
    assert.equal(seen.size, 1, "every run of either engine gave the same text");
  });
}
