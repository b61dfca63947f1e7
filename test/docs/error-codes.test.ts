// The error codes the docs name are the closed set in src/errors.ts: docs/errors.md lists each code
// with the meaning ERROR_CODES gives it, in the same order, and no README or docs page names a code
// that no error can carry.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { ERROR_CODES } from "../../src/errors.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const read = (page: string) => readFileSync(path.join(REPO, page), "utf8");

test("docs/errors.md lists every code, and only those, with its meaning", () => {
  const rows = [...read("docs/errors.md").matchAll(/^\| `(E[A-Z]+)` \| (.*) \|$/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(rows, Object.entries(ERROR_CODES));
});

test("no README or docs page names an error code that is not in the set", () => {
  const pages = ["README.md", ...readdirSync(path.join(REPO, "docs")).map((f) => `docs/${f}`)];
  const unknown = pages.flatMap((page) =>
    [...read(page).matchAll(/`(E[A-Z]{3,})`/g)]
      .map((m) => m[1])
      .filter((code) => !Object.hasOwn(ERROR_CODES, code))
      .map((code) => `${page}: ${code}`),
  );
  assert.deepEqual(unknown, []);
});
