// Codex's 23 apply_patch scenarios (shared/conformance/apply-patch-codex, see its SOURCE.md), judged
// as Codex judges them: only the final tree counts, compared whole (folders too) byte for byte.
// 015 differs on purpose: latch is all-or-nothing, so the expected tree there is the untouched input.
import assert from "node:assert/strict";
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { makeFixture } from "../../helpers/fixture.js";
import { sharedDir } from "./shared-dir.js";

const SCENARIOS = path.join(sharedDir("conformance/apply-patch-codex"), "scenarios");
const ALL_OR_NOTHING = "015_failure_after_partial_success_leaves_changes";

/** Every entry under `dir`: folders as "d path", files as "f path <hex bytes>". */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const rel of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const abs = path.join(dir, rel);
    out.push(statSync(abs).isDirectory() ? `d ${rel}` : `f ${rel} ${readFileSync(abs).toString("hex")}`);
  }
  return out;
}

const names = readdirSync(SCENARIOS)
  .filter((n) => statSync(path.join(SCENARIOS, n)).isDirectory())
  .sort();

describe("apply_patch passes Codex's scenarios", () => {
  test("all 23 scenarios are there", () => assert.equal(names.length, 23));

  for (const name of names) {
    test(name, async () => {
      const fx = makeFixture();
      after(() => fx.cleanup());
      const dir = path.join(SCENARIOS, name);
      const input = path.join(dir, "input");
      if (existsSync(input)) cpSync(input, fx.root, { recursive: true });
      const host = await fx.host();
      // A model reads before it changes: every input file is read in the session first.
      for (const line of tree(fx.root)) {
        if (!line.startsWith("f ")) continue;
        const rel = line.split(" ")[1];
        assert.equal((await host.call("read_file", { path: rel })).status, "ok", rel);
      }
      const patch = readFileSync(path.join(dir, "patch.txt"), "utf8");
      const res = await host.call("apply_patch", { patch });
      const expected = name === ALL_OR_NOTHING ? tree(input) : tree(path.join(dir, "expected"));
      assert.deepEqual(tree(fx.root), expected, JSON.stringify(res));
      // A scenario that changes the tree must have succeeded, one that does not must have been rejected.
      assert.equal(res.status === "ok", JSON.stringify(expected) !== JSON.stringify(tree(input)), JSON.stringify(res));
    });
  }
});
