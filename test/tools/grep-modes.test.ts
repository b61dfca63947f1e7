// grep's output modes (content, files_with_matches, count) and offset, with both engines.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
fx.write({
  "gm/a.txt": "needle 1\nhay\nneedle 2\n",
  "gm/b.txt": "hay\nneedle 3\n",
  "gm/c.txt": "hay only\n",
  "gm/d.txt": "needle 4\nneedle 5\nneedle 6\n",
});

for (const engine of ["rg", "js"]) {
  describe(`grep modes (${engine})`, () => {
    let hostP: Promise<Host> | undefined;
    const host = () =>
      (hostP ??= fx.host({
        env: { PATH: process.env.PATH ?? "", HOME: fx.base, ...(engine === "js" ? { LATCH_GREP_ENGINE: "js" } : {}) },
        config: { toolsPolicies: { local_fs: { _max_grep_matches: "3" } }, agents: {} },
      }));
    const grep = async (args: Record<string, unknown>): Promise<any> =>
      ((await (await host()).call("grep", { pattern: "needle", path: "gm", ...args })) as { result: any }).result;

    test("files_with_matches lists the paths; count gives matches per file", async () => {
      const f = await grep({ output: "files_with_matches" });
      assert.deepEqual(f.files, ["gm/a.txt", "gm/b.txt", "gm/d.txt"]);
      assert.equal(f.results, undefined);
      assert.equal(f.files_with_matches, 3);
      const c = await grep({ output: "count" });
      assert.deepEqual(c.counts[0], { path: "gm/a.txt", matches: 2 });
      assert.equal(c.total_matches, 6);
    });

    test("offset pages past the match cap: together the pages show every match once", async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < 6; offset += 3) {
        const r = await grep({ offset });
        for (const line of String(r.results).split("\n")) if (line) seen.push(line.replace(/^.*?:\d+: /, ""));
      }
      assert.deepEqual(seen, ["needle 1", "needle 2", "needle 3", "needle 4", "needle 5", "needle 6"]);
      const past = await grep({ offset: 10 });
      assert.equal(past.results, "");
    });
  });
}
