// scripts/test.mjs runs each test file as a bundle (esbuild) without module hooks: the modules in it
// must still see their own source file in import.meta, where fixtures, workers and helpers are found.
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
