// scripts/test.mjs runs each test file as a bundle (esbuild) without module hooks: the modules in it
// must still see their own source file in import.meta, where fixtures, workers and helpers are found.
// It also runs them without NODE_EXTRA_CA_CERTS, which costs Node 20 ~36 ms at every process start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

test("a test file's import.meta.url and dirname name its own .ts source, bundled or not", () => {
  const file = fileURLToPath(import.meta.url);
  assert.equal(path.basename(file), "runner-meta.test.ts");
  assert.match(readFileSync(file, "utf8"), /a test file's import\.meta\.url and dirname name its own \.ts source/);
  assert.equal(import.meta.dirname, path.dirname(file));
});

test("the runner's test processes start without NODE_EXTRA_CA_CERTS, and so do the processes they start", (t) => {
  // LATCH_TEST_TIMES is the runner's own variable: a file run some other way says so, skipped.
  if (process.env.LATCH_TEST_TIMES === undefined) return t.skip("not run by scripts/test.mjs");
  assert.equal(process.env.NODE_EXTRA_CA_CERTS, undefined);
});
