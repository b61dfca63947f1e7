// A pinned text under test/snapshots/: a change fails until it is rewritten on purpose with
// UPDATE_SNAPSHOTS=1 (then review the diff and commit it).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "snapshots");

export function matchSnapshot(name: string, value: unknown, what: string): void {
  const file = path.join(DIR, name);
  const text = JSON.stringify(value, null, 2) + "\n";
  if (process.env.UPDATE_SNAPSHOTS === "1") writeFileSync(file, text);
  assert.equal(
    text,
    readFileSync(file, "utf8"),
    `${what} changed: review the diff, then rerun with UPDATE_SNAPSHOTS=1`,
  );
}
