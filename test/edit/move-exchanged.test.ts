// Attack (review g67): move_file checked its source by name (the session's read of it, its expected
// bytes, its pre-image) and moved it by name later (with `overwrite` a rename, without it a link): a
// process exchanging the source with another file of the folder (renameat2
// RENAME_EXCHANGE, both names always there) made that other file move to the destination, while the
// reply said the file the model had read had (107 of 200 replies). The source is now pinned as the
// destination is (ReadPin): only the file read moves, or the move is refused.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { compileRacer, EXCHANGER, startRacer } from "../helpers/racer.js";
import { stressCount } from "../helpers/stress.js";

const ROUNDS = stressCount(30, 300, "LATCH_MOVE_EXCHANGED_ROUNDS");

const fx = makeFixture("latch-move-exchanged-");
after(() => fx.cleanup());

// Without `overwrite` the source's path itself resolved to the other file's name (the resolver read back
// the name of the file it opened, which the exchange had moved: 6 of 29 moves, 150 rounds), until the
// resolver walked such a path by hand (readBack in src/fs/paths.ts; test/fs/resolve-exchanged.test.ts).
for (const overwrite of [true, false]) {
  test(`attack: the source exchanged with another file during move_file${overwrite ? "'s overwrite" : ""}: only the file read moves`, async () => {
    const exchanger = compileRacer(EXCHANGER);
    fx.write({ "keep.txt": "x\n" });
    const host = await fx.host();
    after(() => host.close());
    const dir = path.join(host.root, overwrite ? "over" : "new");
    const rel = path.basename(dir);
    mkdirSync(dir);
    const p = (n: string) => path.join(dir, n);
    let moved = 0;
    let refused = 0;
    let wrong = 0;
    let lost = 0;
    for (let i = 0; i < ROUNDS; i++) {
      for (const n of readdirSync(dir)) rmSync(p(n), { force: true });
      writeFileSync(p("a.txt"), `A ${i}\n`);
      if (overwrite) writeFileSync(p("b.txt"), `B ${i}\n`);
      writeFileSync(p("victim.txt"), `V ${i}\n`);
      const s = { session: `s${i}` };
      assert.equal((await host.call("read_file", { path: `${rel}/a.txt` }, s)).status, "ok");
      if (overwrite) assert.equal((await host.call("read_file", { path: `${rel}/b.txt` }, s)).status, "ok");
      const racer = await startRacer(exchanger, [p("a.txt"), p("victim.txt")]);
      let r;
      try {
        r = await host.call("move_file", { from: `${rel}/a.txt`, to: `${rel}/b.txt`, overwrite }, s);
      } finally {
        await racer.stop();
      }
      const held = readdirSync(dir).map((n) => readFileSync(p(n), "utf8"));
      if (!held.includes(`V ${i}\n`) || !held.includes(`A ${i}\n`)) lost++;
      if (r.status !== "ok") refused++;
      else {
        moved++;
        if (readFileSync(p("b.txt"), "utf8") !== `A ${i}\n`) wrong++;
      }
    }
    assert.equal(lost, 0, "neither file's bytes are ever lost");
    assert.ok(refused > 0, `${refused} of ${ROUNDS} refused: the racer ran`);
    // A rename cannot compare and swap: one in reserve for an exchange in the microseconds after the
    // last look (with the source moved by name, about half the moves moved the other file).
    assert.ok(wrong <= 1, `${wrong} of ${moved} moves put another file at b.txt than the one read`);
  });
}
