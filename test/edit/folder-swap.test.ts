// Review g60: a folder swapped while an edit runs took the edit to a file the model did not read. A
// background process exchanged two real folders `d` and `e` while the model edited `d/victim`, which
// it had read: the base check read the file through one walk, the write staged and renamed through
// another, and 75 of ~190 edits overwrote `e/victim`, never read. The write is now tied to the read
// (ReadPin, src/fs/atomic-write.ts): it stages in the folder the read went through and renames only
// while the name there still holds the file read, else it is refused as stale.
import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { mutate, type MutationContext } from "../../src/edit/mutate.js";
import { beneathMode } from "../../src/fs/beneath.js";
import { Ledger } from "../../src/fs/ledger.js";
import type { ResolvedPath } from "../../src/fs/paths.js";
import { sha256 } from "../../src/fs/text.js";
import { cannotExchange, startExchanger } from "../helpers/exchange-folders.js";
import { makeFixture } from "../helpers/fixture.js";
import { forMs, RACE_MS, tempFiles } from "../fs/race-fixture.js";

const PRECIOUS = "precious: never read by the model\n";

describe("a folder swapped while an edit runs (review g60)", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("with d and e exchanged by a background process, every edit of d/victim lands on the file read or is refused as stale", async (t) => {
    const why = cannotExchange();
    if (why) assert.fail(why); // python3 is one of the suite's packages (.ci/run): never skipped
    fx.write({ "race/d/victim": "model 0\n", "race/e/victim": PRECIOUS });
    const host = await fx.host();
    const s = { session: "s" };
    assert.equal((await host.call("read_file", { path: "race/d/victim" }, s)).status, "ok");
    // The model never reads again: each landed write moves its marker on, so the next call is based
    // on the file it wrote; a call that finds the other file is refused, never retried from a re-read.
    const racer = await startExchanger(path.join(fx.root, "race/d"), path.join(fx.root, "race/e"));
    let last = "model 0\n";
    let landed = 0;
    let refused = 0;
    let swaps: number;
    try {
      await forMs(
        RACE_MS,
        async (i) => {
          const next = `model ${i + 1}\n`;
          const r =
            i % 2 === 0
              ? await host.call("write_file", { path: "race/d/victim", content: next }, s)
              : await host.call("edit_file", { path: "race/d/victim", old_string: last, new_string: next }, s);
          if (r.status === "ok") {
            last = next;
            landed++;
            return;
          }
          // Stale, or (the path resolved while `d` was `e`'s folder) named `e/victim`, never read.
          assert.equal(r.status, "refused", JSON.stringify(r));
          assert.match(r.reason, /(changed since|have not read it in this session).*nothing was written/, r.reason);
          assert.match(r.hint ?? "", /^Read .*then retry\.$/);
          refused++;
        },
        () => landed > 0 && refused > 0,
      );
    } finally {
      swaps = await racer.stop();
    }
    t.diagnostic(`landed ${landed}, refused ${refused}, swaps ${swaps}`);
    assert.ok(swaps > 0, "the folders were exchanged");
    // Whichever folder each ended in: the file never read holds its content, the one read the last write.
    const held = ["d", "e"].map((f) => readFileSync(path.join(fx.root, "race", f, "victim"), "utf8")).sort();
    assert.deepEqual(held, [last, PRECIOUS].sort(), `landed ${landed}, refused ${refused}, swaps ${swaps}`);
    assert.deepEqual(tempFiles(fx.root), [], "no temp file left");
  });

  /** A session that read `rel`, and a mutation context on a ledger of its own, as another process would have. */
  async function readBy(rel: string): Promise<{ ctx: MutationContext; target: ResolvedPath; base: string }> {
    const host = await fx.host();
    assert.equal((await host.call("read_file", { path: rel }, { session: "m" })).status, "ok");
    const ledger = new Ledger(host.state.db);
    after(() => ledger.close());
    const ctx = { root: host.root, locksDir: host.state.locks, ledger, session: "m" };
    const target = { abs: path.join(host.root, rel), rel, input: rel } as ResolvedPath;
    return { ctx, target, base: ledger.latest("m", target.abs)! };
  }

  /** Exchange two folders by hand (three renames: nothing runs in between here). */
  const exchange = (a: string, b: string) => {
    renameSync(a, `${a}.x`);
    renameSync(b, a);
    renameSync(`${a}.x`, b);
  };

  test("the folder exchanged between the read and the write: the write lands on the file read, in its new place", async () => {
    fx.write({ "swap/d/victim": "read\n", "swap/e/victim": PRECIOUS });
    const { ctx, target, base } = await readBy("swap/d/victim");
    const d = path.join(fx.root, "swap/d");
    const e = path.join(fx.root, "swap/e");
    const out = await mutate(ctx, {
      target,
      needs: "range",
      expectSha: base,
      apply: (current) => {
        exchange(d, e); // after the base check, before the write stages
        return `${String(current)}edited\n`;
      },
    });
    assert.equal(out.written, true);
    assert.equal(readFileSync(path.join(d, "victim"), "utf8"), PRECIOUS, "the file never read is untouched");
    assert.equal(readFileSync(path.join(e, "victim"), "utf8"), "read\nedited\n", "the file read took the write");
    assert.deepEqual(tempFiles(path.join(fx.root, "swap")), []);
  });

  test("without /proc, the same exchange is refused: the read's folder is no longer at its path", async () => {
    fx.write({ "slow/d/victim": "read\n", "slow/e/victim": PRECIOUS });
    const { ctx, target, base } = await readBy("slow/d/victim");
    const d = path.join(fx.root, "slow/d");
    const e = path.join(fx.root, "slow/e");
    const proc = beneathMode.proc;
    beneathMode.proc = false; // the fallback (macOS): names are used by path, each folder re-checked
    try {
      await assert.rejects(
        mutate(ctx, {
          target,
          needs: "range",
          expectSha: base,
          apply: (current) => {
            exchange(d, e);
            return `${String(current)}edited\n`;
          },
        }),
        /The folder `slow\/d` changed while writing \(it was replaced\); nothing was written/,
      );
    } finally {
      beneathMode.proc = proc;
    }
    assert.equal(readFileSync(path.join(d, "victim"), "utf8"), PRECIOUS);
    assert.equal(readFileSync(path.join(e, "victim"), "utf8"), "read\n");
    assert.deepEqual(tempFiles(path.join(fx.root, "slow")), []);
  });

  test("another file renamed into the read file's place before the rename: refused as stale, nothing written", async () => {
    fx.write({ "put/victim": "read\n", "put/other": PRECIOUS });
    const { ctx, target, base } = await readBy("put/victim");
    await assert.rejects(
      mutate(ctx, {
        target,
        needs: "range",
        expectSha: base,
        apply: (current) => `${String(current)}edited\n`,
        // After the temp file is staged, before the rename.
        meanwhile: () => {
          renameSync(path.join(fx.root, "put/other"), path.join(fx.root, "put/victim"));
          return undefined;
        },
      }),
      (err: Error) => {
        assert.match(err.message, /`put\/victim` changed since you read it \(another file took its place/);
        assert.match(err.message, /nothing was written/);
        assert.match(String((err as { hint?: string }).hint), /Read it again, then retry/);
        return true;
      },
    );
    assert.equal(readFileSync(path.join(fx.root, "put/victim"), "utf8"), PRECIOUS);
    assert.deepEqual(tempFiles(path.join(fx.root, "put")), [], "the temp file went");
    // The marker reserved for the new content went again: the session's base is still what it read.
    assert.equal(ctx.ledger.latest("m", target.abs), base);
    assert.equal(ctx.ledger.seen("m", target.abs, sha256("read\nedited\n")), undefined);
  });

  test("a file made at a name that was missing when read: refused as stale, the file made is kept", async () => {
    fx.write({ "made/keep": "x\n" });
    const { ctx } = await readBy("made/keep");
    const rel = "made/new";
    const target = { abs: path.join(fx.root, rel), rel, input: rel } as ResolvedPath;
    await assert.rejects(
      mutate(ctx, {
        target,
        needs: "full",
        expectSha: null,
        apply: () => "mine\n",
        meanwhile: () => {
          writeFileSync(path.join(fx.root, rel), PRECIOUS);
          return undefined;
        },
      }),
      /`made\/new` changed since you read it \(a file was made there while this write ran\); nothing was written/,
    );
    assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), PRECIOUS);
    assert.deepEqual(tempFiles(path.join(fx.root, "made")), []);
  });
});
