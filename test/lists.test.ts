// `npm test` runs test/suite.txt then test/stress.txt; `npm run test:stress` runs the second alone.
// Every test file on disk is in exactly one of them, so none is lost and none runs twice.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const list = (name: string) =>
  readFileSync(path.join(REPO, "test", name), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");

test("every test file is listed once, in test/suite.txt or test/stress.txt", () => {
  const listed = [...list("suite.txt"), ...list("stress.txt")];
  const dupes = listed.filter((f, i) => listed.indexOf(f) !== i);
  assert.deepEqual(dupes, [], "listed twice: a run would test them twice");
  const onDisk = readdirSync(path.join(REPO, "test"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f.split(path.sep).join("/")}`);
  assert.deepEqual(
    onDisk.filter((f) => !listed.includes(f)).sort(),
    [],
    "test files in no list: add them to test/suite.txt or test/stress.txt",
  );
  assert.deepEqual(
    listed.filter((f) => !onDisk.includes(f)),
    [],
    "listed files that do not exist",
  );
});
