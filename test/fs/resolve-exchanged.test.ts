// Attack (found 2026-12-08): the resolver opened a path and read back the name of the file it had
// opened (/proc/self/fd), which is where that file is when it reads, not where it was: a process
// exchanging two names of the workspace (renameat2 RENAME_EXCHANGE) between the two made `a.txt`
// resolve to `b.txt`, and the call act on a file it did not name (move_file moved the other file in 6
// of 29 moves, test/edit/move-exchanged.test.ts). A path that does not read back as itself is now walked
// by hand below the root (readBack in src/fs/paths.ts): every answer names what was asked.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { resolvePath, type PathPolicy } from "../../src/fs/paths.js";
import { compileRacer, EXCHANGER, startRacer } from "../helpers/racer.js";
import { stressCount } from "../helpers/stress.js";

/** Resolutions per case against the exchanger (the old resolver named the other file in 1 of 20 to 1 of 200 here). */
const CALLS = stressCount(3000, 30000, "LATCH_RESOLVE_EXCHANGED_CALLS");

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-resolve-exchanged-")));
after(() => rmSync(root, { recursive: true, force: true }));
const policy: PathPolicy = { root, controlPlane: [], deniedSubstrings: [] };
const exchanger = compileRacer(EXCHANGER);

/** Resolve `asked` `calls` times while `x` and `y` (under the root) are exchanged; the answers not `asked`, counted by name. */
async function resolvedWhileExchanged(
  asked: string,
  x: string,
  y: string,
  calls = CALLS,
): Promise<Map<string, number>> {
  const racer = await startRacer(exchanger, [path.join(root, x), path.join(root, y)]);
  const others = new Map<string, number>();
  try {
    for (let i = 0; i < calls; i++) {
      const r = await resolvePath(policy, asked);
      if (r.rel !== asked) others.set(r.rel, (others.get(r.rel) ?? 0) + 1);
      assert.equal(r.abs, path.join(root, r.rel));
    }
  } finally {
    assert.ok((await racer.stop()) > 0, "the exchanger ran");
  }
  return others;
}

test("attack: a file exchanged with another while its path resolves: every answer is the file asked for", async () => {
  writeFileSync(path.join(root, "a.txt"), "A\n");
  writeFileSync(path.join(root, "b.txt"), "B\n");
  const others = await resolvedWhileExchanged("a.txt", "a.txt", "b.txt", CALLS * 2);
  assert.deepEqual([...others], [], "resolved to another name");
});

test("attack: a folder exchanged with another while a path in it resolves: the folder asked for, the file in it and a new one", async () => {
  for (const d of ["d1", "d2"]) {
    mkdirSync(path.join(root, d));
    writeFileSync(path.join(root, d, "f.txt"), `${d}\n`);
  }
  // Folders are exchanged fewer times a second than files: the old resolver named the other one about
  // once in 3,000 here, so each path is resolved four times as often.
  const others = await resolvedWhileExchanged("d1/f.txt", "d1", "d2", CALLS * 4);
  // A path that does not exist yet resolves through its folder (the ENOENT walk in canonicalPath).
  for (const [rel, n] of await resolvedWhileExchanged("d1/new.txt", "d1", "d2", CALLS * 4)) others.set(rel, n);
  assert.deepEqual([...others], [], "resolved into the other folder");
});

test("a path through links, which reads back as another, is walked by hand to where the kernel goes", async () => {
  mkdirSync(path.join(root, "real"));
  writeFileSync(path.join(root, "real", "t.txt"), "T\n");
  symlinkSync("real", path.join(root, "via"));
  symlinkSync("via/t.txt", path.join(root, "chain.txt"));
  assert.equal((await resolvePath(policy, "via/t.txt")).rel, "real/t.txt");
  assert.equal((await resolvePath(policy, "chain.txt")).rel, "real/t.txt");
  assert.equal((await resolvePath(policy, "via/new.txt")).rel, "real/new.txt");
  const outside = mkdtempSync(path.join(os.tmpdir(), "latch-resolve-outside-"));
  after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(path.join(outside, "secret.txt"), "S\n");
  symlinkSync(outside, path.join(root, "out"));
  await assert.rejects(resolvePath(policy, "out/secret.txt"), /outside the workspace/);
  await assert.rejects(resolvePath(policy, "via/../out/secret.txt"), /outside the workspace/);
});
