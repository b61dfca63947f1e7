// Review g60: a folder swapped while an edit runs took the edit to a file the model did not read. A
// background process exchanged two real folders `d` and `e` while the model edited `d/victim`, which
// it had read: the base check read the file through one walk, the write staged and renamed through
// another, and 75 of ~190 edits overwrote `e/victim`, never read. The write is now tied to the read
// (ReadPin, src/fs/atomic-write.ts): it stages in the folder the read went through and renames only
// while the name there still holds the file read, else it is refused as stale.
import assert from "node:assert/strict";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test, type TestContext } from "node:test";
import { commitChanges } from "../../src/edit/changeset.js";
import { mutate, type MutationContext } from "../../src/edit/mutate.js";
import { replaceStreamed } from "../../src/edit/mutate-stream.js";
import { Refusal, ToolError } from "../../src/errors.js";
import { beneathMode } from "../../src/fs/beneath.js";
import { Ledger } from "../../src/fs/ledger.js";
import type { ResolvedPath } from "../../src/fs/paths.js";
import { sha256 } from "../../src/fs/text.js";
import { cannotExchange, startExchanger } from "../helpers/exchange-folders.js";
import { makeFixture } from "../helpers/fixture.js";
import { forMs, RACE_MS, tempFiles } from "../fs/race-fixture.js";

const PRECIOUS = "precious: never read by the model\n";

const fx = makeFixture();
after(() => fx.cleanup());

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

/**
 * The attack of review g60 on one kind of write: `AREA/d/victim` (read by the model) and
 * `AREA/e/victim` (never read) exchanged by a background process while `read()`'s writer changes
 * `d/victim` again and again, each time from the content it last wrote (true: it landed; false: it
 * was refused). Whichever folder each ends in, the file never read holds its content, the one read
 * the last write, and no temp file is left.
 */
async function raceExchanged(
  t: TestContext,
  area: string,
  read: () => Promise<(last: string, next: string, i: number) => Promise<boolean>>,
): Promise<void> {
  const why = cannotExchange();
  if (why) assert.fail(why); // python3 is one of the suite's packages (.ci/run): never skipped
  fx.write({ [`${area}/d/victim`]: "model 0\n", [`${area}/e/victim`]: PRECIOUS });
  const attempt = await read();
  const racer = await startExchanger(path.join(fx.root, area, "d"), path.join(fx.root, area, "e"));
  let last = "model 0\n";
  let landed = 0;
  let refused = 0;
  let swaps: number;
  try {
    await forMs(
      RACE_MS,
      async (i) => {
        const next = `model ${i + 1}\n`;
        if (await attempt(last, next, i)) {
          last = next;
          landed++;
        } else refused++;
      },
      () => landed > 0 && refused > 0,
    );
  } finally {
    swaps = await racer.stop();
  }
  const tally = `landed ${landed}, refused ${refused}, swaps ${swaps}`;
  t.diagnostic(tally);
  assert.ok(swaps > 0, "the folders were exchanged");
  const held = ["d", "e"].map((f) => readFileSync(path.join(fx.root, area, f, "victim"), "utf8")).sort();
  assert.deepEqual(held, [last, PRECIOUS].sort(), tally);
  assert.deepEqual(tempFiles(fx.root), [], "no temp file left");
}

describe("a folder swapped while an edit runs (review g60)", () => {
  test("with d and e exchanged by a background process, every edit of d/victim lands on the file read or is refused as stale", (t) =>
    raceExchanged(t, "race", async () => {
      const host = await fx.host();
      const s = { session: "s" };
      assert.equal((await host.call("read_file", { path: "race/d/victim" }, s)).status, "ok");
      // The model never reads again: each landed write moves its marker on, so the next call is based
      // on the file it wrote; a call that finds the other file is refused, never retried from a re-read.
      return async (last, next, i) => {
        const r =
          i % 2 === 0
            ? await host.call("write_file", { path: "race/d/victim", content: next }, s)
            : await host.call("edit_file", { path: "race/d/victim", old_string: last, new_string: next }, s);
        if (r.status === "ok") return true;
        // Stale, or (the path resolved while `d` was `e`'s folder) named `e/victim`, never read.
        assert.equal(r.status, "refused", JSON.stringify(r));
        assert.match(r.reason, /(changed since|have not read it in this session).*nothing was written/, r.reason);
        assert.match(r.hint ?? "", /^Read .*then retry\.$/);
        return false;
      };
    }));

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

// The same attack on the writes that change several files at once (apply_patch, delete_file, undo:
// commitChanges in src/edit/changeset.ts) and on a streamed edit of a file too large to hold
// (replaceStreamed in src/edit/mutate-stream.ts). Each read its files through one walk and staged,
// renamed or removed through another, so a folder exchanged in between took the change to files
// nobody read. Each is now pinned to its read (ReadPin) as mutate() is.
describe("a folder swapped while a changeset or a streamed edit runs", () => {
  test("apply_patch with d and e exchanged by a background process: every patch lands on the file read or is refused", (t) =>
    raceExchanged(t, "prace", async () => {
      const host = await fx.host();
      const s = { session: "p" };
      assert.equal((await host.call("read_file", { path: "prace/d/victim" }, s)).status, "ok");
      return async (last, next) => {
        const patch = `*** Begin Patch\n*** Update File: prace/d/victim\n@@\n-${last}+${next}*** End Patch`;
        const r = await host.call("apply_patch", { patch }, s);
        if (r.status === "ok") return true;
        // Stale; named `e/victim`, never read; or the patch's line not found in the file it found.
        assert.ok(r.status === "refused" || r.status === "error", JSON.stringify(r));
        if (r.status === "refused") assert.match(r.reason, /changed since|have not read it in this session/, r.reason);
        else assert.match(r.message, /not found|does not match|could not find/i, r.message);
        return false;
      };
    }));

  test("move_file over a read file with d and e exchanged by a background process: only the file read is replaced", (t) =>
    raceExchanged(t, "mrace", async () => {
      const host = await fx.host();
      const s = { session: "mv" };
      assert.equal((await host.call("read_file", { path: "mrace/d/victim" }, s)).status, "ok");
      return async (_last, next) => {
        assert.equal((await host.call("write_file", { path: "mrace/new", content: next }, s)).status, "ok");
        const r = await host.call("move_file", { from: "mrace/new", to: "mrace/d/victim", overwrite: true }, s);
        if (r.status === "ok") return true;
        assert.equal(r.status, "refused", JSON.stringify(r));
        assert.match(r.reason, /changed since|have not (fully )?read it/, r.reason);
        return false;
      };
    }));

  test("a patch's folder exchanged between the read and the write: the change lands on the file read, in its new place", async () => {
    fx.write({ "cs/d/victim": "read\n", "cs/e/victim": PRECIOUS });
    const { ctx, target } = await readBy("cs/d/victim");
    const d = path.join(fx.root, "cs/d");
    const e = path.join(fx.root, "cs/e");
    await commitChanges(ctx, [target], undefined, (currents) => {
      exchange(d, e); // after the read, before the write stages
      return [{ target, after: Buffer.concat([currents.get(target.abs)!, Buffer.from("edited\n")]), needs: "range" }];
    });
    assert.equal(readFileSync(path.join(d, "victim"), "utf8"), PRECIOUS, "the file never read is untouched");
    assert.equal(readFileSync(path.join(e, "victim"), "utf8"), "read\nedited\n", "the file read took the change");
    assert.deepEqual(tempFiles(path.join(fx.root, "cs")), []);
  });

  test("a deletion's folder exchanged between the read and the removal: the file read goes, the other stays", async () => {
    fx.write({ "del/d/victim": "read\n", "del/e/victim": PRECIOUS });
    const { ctx, target } = await readBy("del/d/victim");
    const d = path.join(fx.root, "del/d");
    const e = path.join(fx.root, "del/e");
    await commitChanges(ctx, [target], undefined, () => {
      exchange(d, e);
      return [{ target, after: null, needs: "full" }];
    });
    assert.equal(readFileSync(path.join(d, "victim"), "utf8"), PRECIOUS, "the file never read is kept");
    assert.equal(existsSync(path.join(e, "victim")), false, "the file read was removed");
  });

  test("another file renamed into a deleted file's place after the read: refused as stale, nothing removed", async () => {
    fx.write({ "delput/victim": "read\n", "delput/other": PRECIOUS, "delput/keep": "kept\n" });
    const { ctx, target } = await readBy("delput/victim");
    const keep = { ...target, abs: path.join(fx.root, "delput/keep"), rel: "delput/keep", input: "delput/keep" };
    assert.equal((await (await fx.host()).call("read_file", { path: "delput/keep" }, { session: "m" })).status, "ok");
    await assert.rejects(
      commitChanges(ctx, [target, keep], undefined, () => {
        renameSync(path.join(fx.root, "delput/other"), path.join(fx.root, "delput/victim"));
        return [
          { target: keep, after: Buffer.from("changed\n"), needs: "full" },
          { target, after: null, needs: "full" },
        ];
      }),
      /`delput\/victim` changed since you read it \(another file took its place while this write ran\); nothing was written/,
    );
    assert.equal(readFileSync(path.join(fx.root, "delput/victim"), "utf8"), PRECIOUS, "the file put there is kept");
    assert.equal(readFileSync(path.join(fx.root, "delput/keep"), "utf8"), "kept\n", "the other change was put back");
    assert.deepEqual(tempFiles(path.join(fx.root, "delput")), []);
  });

  test("a streamed edit's folder exchanged after the read: the rewrite lands on the file read, in its new place", async () => {
    fx.write({ "big/d/victim": "keep\nedit me\n", "big/e/victim": PRECIOUS });
    const { ctx, target } = await readBy("big/d/victim");
    const d = path.join(fx.root, "big/d");
    const e = path.join(fx.root, "big/e");
    const out = await replaceStreamed(
      ctx,
      { target, find: "edit me", replace: "edited", all: false },
      { chunkBytes: 4, afterSurvey: async () => exchange(d, e) },
    );
    assert.equal(out.written, true);
    assert.equal(readFileSync(path.join(d, "victim"), "utf8"), PRECIOUS, "the file never read is untouched");
    assert.equal(readFileSync(path.join(e, "victim"), "utf8"), "keep\nedited\n", "the file read took the edit");
    assert.deepEqual(tempFiles(path.join(fx.root, "big")), []);
  });

  test("streamed edits with d and e exchanged by a background process: each lands on the file read or is refused", (t) =>
    raceExchanged(t, "srace", async () => {
      const { ctx, target } = await readBy("srace/d/victim");
      return async (last, next) => {
        try {
          await replaceStreamed(ctx, { target, find: last, replace: next, all: false }, { chunkBytes: 4 });
          return true;
        } catch (err) {
          // Found the other file (never read, or no match), or the file read changed place meanwhile.
          assert.ok(err instanceof Refusal || err instanceof ToolError, String(err));
          return false;
        }
      };
    }));
});
