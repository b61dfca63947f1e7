// The config guard's baseline (src/sandbox/config-guard.ts) is read through `.git`'s descriptor:
// a `.git` that a process beside latch swapped for a link to an outside folder is read as "no
// file", never where it points. A restore writes the baseline's bytes into `.git/config`, so an
// outside file read here would land in the workspace, where the model reads it.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { configBaseline } from "../../src/sandbox/config-guard.js";

const base = mkdtempSync(path.join(os.tmpdir(), "latch-config-baseline-"));
after(() => rmSync(base, { recursive: true, force: true }));

test("attack: .git swapped for a link to an outside folder with a config: the baseline reads nothing there", () => {
  const root = path.join(base, "ws");
  const outside = path.join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "config"), "[credential]\n\thelper = outside-secret\n");
  symlinkSync(outside, path.join(root, ".git"));
  const b = configBaseline(root, ["remote.origin."]);
  assert.equal(b.bytes, undefined);
  // The outside file is as it was (nothing was written through the link either).
  assert.equal(readFileSync(path.join(outside, "config"), "utf8"), "[credential]\n\thelper = outside-secret\n");
});

test("a .git/config that is a link is no file; a real one is read whole", () => {
  const root = path.join(base, "ws2");
  mkdirSync(path.join(root, ".git"), { recursive: true });
  writeFileSync(path.join(base, "elsewhere"), "[core]\n\tfsmonitor = x\n");
  symlinkSync(path.join(base, "elsewhere"), path.join(root, ".git/config"));
  assert.equal(configBaseline(root, []).bytes, undefined);
  rmSync(path.join(root, ".git/config"));
  writeFileSync(path.join(root, ".git/config"), "[core]\n\tbare = false\n");
  assert.equal(configBaseline(root, []).bytes?.toString(), "[core]\n\tbare = false\n");
});
