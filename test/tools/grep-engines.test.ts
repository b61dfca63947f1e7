// The two grep engines against each other on generated trees: same pattern, same flags, same answer.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import { makeFixture } from "../helpers/fixture.js";
import { expectOk } from "../helpers/expect.js";

describe("grep engines agree", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("rg and the JS engine give identical results on random files, patterns and flags", async () => {
    const rg = await fx.host({
      env: { LATCH_GREP_ENGINE: "rg" },
      config: { toolsPolicies: { local_fs: { _max_grep_matches: "7" } }, agents: {} },
    });
    const js = await fx.host({
      env: { LATCH_GREP_ENGINE: "js" },
      config: { toolsPolicies: { local_fs: { _max_grep_matches: "7" } }, agents: {} },
    });
    const piece = fc.constantFrom("a", "b", "A", "B", " ", ".", "\n", "\n", "\r\n", "é", "ab", "ba");
    const content = fc.array(piece, { maxLength: 40 }).map((p) => p.join(""));
    const literal = fc.record({
      pattern: fc.constantFrom("a", "ab", "b a", "A", "a.b", "é", "B"),
      regex: fc.constant(false),
    });
    const regex = fc.record({
      pattern: fc.constantFrom("a+b", "^a", "b$", "a.b", "[ab]{2}", "^$", "a|B", "^.b", "é+"),
      regex: fc.constant(true),
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(content, { minLength: 1, maxLength: 4 }),
        fc.oneof(literal, regex),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 }),
        async (files, pat, caseSensitive, context) => {
          const dir = `case${n++}`;
          mkdirSync(path.join(fx.root, dir));
          files.forEach((c, i) => writeFileSync(path.join(fx.root, dir, `f${i}.txt`), c));
          const args = { ...pat, path: dir, case_sensitive: caseSensitive, context };
          const a = await rg.call("grep", args);
          const b = await js.call("grep", args);
          assert.equal(a.status, "ok");
          // Past the cap too: the first matches in path order, and counting stops after the same file.
          assert.deepEqual(expectOk<unknown>(b).result, expectOk<unknown>(a).result, JSON.stringify({ args, files }));
        },
      ),
      { numRuns: 120, seed: 20261130 },
    );
  });
});
