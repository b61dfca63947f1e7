// Reviews g60 and g61: ripgrep opens paths by name, so while a contained background process exchanges
// a workspace folder with a link to a folder outside (renameat2 RENAME_EXCHANGE: the name is never
// missing), rg may read an outside file of a name the inside folder has too. Then any part of its
// answer can tell of that file: a binary file's match (`binary_files_skipped`), a count past the lines
// kept (`total_matches`), a pattern latch cannot match again (`(?i)`), the count of names the rule
// hides (`hidden`). In a tree that moved, rg's answer is set aside and latch's own walk answers
// (src/browse/steady-tree.ts): every answer here must be latch's own. find_files, asked beside grep on
// the same host (LATCH_GREP_ENGINE=rg), never asks rg: its walk lists, and counts what it hid.
import assert from "node:assert/strict";
import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import { EXCHANGE } from "../helpers/exchange-folders.js";
import { expectOk } from "../helpers/expect.js";
import { rgSpawnedDuring } from "../tools/browse-fixture.js";
import { waitFor } from "../helpers/wait.js";
import {
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "../sandbox/sandbox-fixture.js";
import { forMs, makeOutside, RACE_MS, snapshot, Tally, type Outside } from "./race-fixture.js";

/** Steps each run takes at the least: one leaks in a few while the racer runs (more with LATCH_STRESS=1). */
const MIN_STEPS = process.env.LATCH_STRESS === "1" ? 200 : 8;
/** grep's match cap (`_max_grep_matches`, 500): the lines it keeps of one file in content mode. */
const MAX_LINES = 500;

let fx: SandboxFixture;
let outside: Outside;
let host: Host;
let racer: string;

/**
 * The exchanger, its folders given in the code: as arguments, the shell's path check would refuse
 * `top/e-link`, which names a folder outside.
 */
const EXCHANGE_E = `import sys\nsys.argv[1:] = ["top/e", "top/e-link"]\n${EXCHANGE}`;

before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-race-oracle-");
  outside = makeOutside(path.join(fx.base, "away"), []);
  // Named like e's: a binary file holding what the pattern asks about, and thrice the matching lines.
  writeFileSync(path.join(outside.dir, "blob.bin"), "\0\nSECRET-outside\n");
  writeFileSync(path.join(outside.dir, "many.txt"), "same line\n".repeat(3 * MAX_LINES));
  // One folder down: the racer changes `top`, never the root, so rg is still asked (a tree changed at
  // its top is searched by latch alone from the start), and only the checks after it stand between.
  fx.write("top/e/blob.bin", "\0\nnothing here\n");
  fx.write("top/e/many.txt", "same line\n".repeat(MAX_LINES));
  symlinkSync(outside.dir, path.join(fx.root, "top/e-link"));
  host = await fx.host({
    envelope: "auto_edit",
    env: { PATH: SYSTEM_PATH.join(":"), HOME: fx.home, LATCH_GREP_ENGINE: "rg" },
  });
  const start = expectOk(
    await host.call("local_shell", {
      command: "/usr/bin/python3",
      args: ["-c", EXCHANGE_E],
      background: true,
    }),
  ).result;
  assert.equal(start.contained, true, "the racer runs in the sandbox");
  racer = String(start.id);
  const out = async () => JSON.stringify(expectOk(await host.call("process_output", { id: racer })).result);
  assert.ok(await waitFor(async () => (await out()).includes("ready")), await out());
  await new Promise((r) => setTimeout(r, STEADY_MARGIN_MS + 200)); // the root stands still from here on
});

after(async () => {
  if (racer) expectOk(await host.call("process_kill", { id: racer }));
  assert.deepEqual(markedProcesses(), [], "the racer is gone");
  fx?.cleanup();
});

test("attack: grep's answers without a line (a binary match, a count past the cap, hidden) tell of outside files", async (t) => {
  // What the rule hides inside (the state folder, and so on): outside, `.aws` is hidden too, and must not count.
  const calm = expectOk(await host.call("grep", { pattern: "nothing at all" })).result as { hidden?: number };
  const hiddenInside = calm.hidden ?? 0;
  const before = snapshot(outside.dir);
  const tally = new Tally();
  let raced = 0;
  let done = 0;
  const steps = await forMs(
    RACE_MS,
    async () => {
      for (const args of [{ pattern: "SECRET-" }, { pattern: "same line", include: "many.txt" }]) {
        const r = tally.add(await host.call("grep", args));
        assert.equal(r.status, "ok", JSON.stringify(r));
        // The racer changes the root all the time: rg's answer is set aside, latch's own walk answers.
        assert.equal((r as { display?: { engine?: string } }).display?.engine, "js", "the tree changed: latch answers");
        const res = r.result as { binary_files_skipped?: number; total_matches: number; results: string };
        assert.equal(res.binary_files_skipped, undefined, `an outside binary file's match: ${JSON.stringify(res)}`);
        assert.ok(res.total_matches <= MAX_LINES, `counted the outside file's lines: ${res.total_matches}`);
        assert.ok(
          ((res as { hidden?: number }).hidden ?? 0) <= hiddenInside,
          `counted hidden names outside: ${JSON.stringify(res)}`,
        );
        if (args.pattern === "same line" && !res.results.includes("top/e/many.txt")) raced++;
      }
      // Review g61: rg's inline flag, which JavaScript cannot read. A count of files set aside as not
      // matched again answered whether the outside file matched; now a changed tree is searched again
      // by latch alone, and this pattern can only be refused there, whatever rg read.
      const inline = tally.add(await host.call("grep", { pattern: "(?i)SECRET-", regex: true }));
      if (inline.status === "ok")
        assert.equal((inline.result as { binary_files_skipped?: number }).binary_files_skipped, undefined);
      else assert.equal(inline.status === "error" && inline.code, "EINVAL", JSON.stringify(inline));
      // Which names rg listed, or left out, in a tree that moved could tell of the outside folder: no rg.
      const { value: found, rg } = await rgSpawnedDuring(() => host.call("find_files", { pattern: "**/*" }));
      tally.add(found);
      assert.equal(found.status, "ok", JSON.stringify(found));
      assert.deepEqual(rg, [], "latch's walk lists");
      const listed = found.result as { hidden?: number };
      assert.ok(
        (listed.hidden ?? 0) <= hiddenInside,
        `find_files counted hidden names outside: ${JSON.stringify(listed)}`,
      );
    },
    () => raced > 0 && ++done >= MIN_STEPS,
  );
  t.diagnostic(`${steps} steps, ${raced} raced (e was the link as rg listed it):\n${tally.summary()}`);
  tally.assertNoMarker(outside.marker);
  assert.deepEqual(snapshot(outside.dir), before, "nothing changed outside");
  assert.ok(raced > 0, "the race reached rg (some search found e's file missing)");
});
