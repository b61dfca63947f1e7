// A write's caller may do its own work while the write's syncs run (Mutation.meanwhile: the write
// tools build the diff they show there): it runs once, before the rename, with the bytes read and
// the bytes about to land; a throw there is the caller's, and never stops or half-does the write.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { mutate, type Mutation } from "../../src/edit/mutate.js";
import { Ledger } from "../../src/fs/ledger.js";
import type { ResolvedPath } from "../../src/fs/paths.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-meanwhile-");
after(() => fx.cleanup());

test("the caller's work runs once before the rename, with both sides; a throw in it does not stop the write", async () => {
  fx.write({ "m.txt": "one\n" });
  const host = await fx.host();
  after(() => host.close());
  assert.equal((await host.call("read_file", { path: "m.txt" }, { session: "m" })).status, "ok");
  const ledger = new Ledger(host.state.db);
  after(() => ledger.close());
  const ctx = { root: host.root, locksDir: host.state.locks, ledger, session: "m" };
  const target = { abs: path.join(host.root, "m.txt"), rel: "m.txt", input: "m.txt" } as ResolvedPath;
  const onDisk = () => readFileSync(target.abs, "utf8");

  const seen: { before: string | null; after: string; disk: string }[] = [];
  const first = await mutate(ctx, {
    target,
    needs: "range",
    expectSha: ledger.latest("m", target.abs)!,
    apply: () => "two\n",
    meanwhile: (before, after) => {
      seen.push({ before: before?.toString() ?? null, after: after.toString(), disk: onDisk() });
    },
  });
  assert.equal(first.written, true);
  assert.deepEqual(seen, [{ before: "one\n", after: "two\n", disk: "one\n" }], "once, before the rename");
  assert.equal(onDisk(), "two\n");

  const second = await mutate(ctx, {
    target,
    needs: "range",
    expectSha: first.afterSha,
    apply: () => "three\n",
    meanwhile: () => {
      throw new Error("the caller's own fault");
    },
  });
  assert.equal(second.written, true);
  assert.equal(onDisk(), "three\n", "the write landed whole");

  let called = 0;
  const same = await mutate(ctx, {
    target,
    needs: "range",
    expectSha: second.afterSha,
    apply: () => "three\n",
    meanwhile: () => void called++,
  });
  assert.equal(same.written, false);
  assert.equal(called, 0, "no write, no work meanwhile");

  // An async one would leave its rejection to nobody: it does not type-check (npm run check's tsc).
  // @ts-expect-error a promise is not undefined
  const later: Mutation["meanwhile"] = async () => undefined;
  assert.equal(typeof later, "function");
});

test("edit_file's diff, built while its write syncs, is the change it made", async () => {
  fx.write({ "d.txt": "alpha\nbeta\ngamma\n" });
  const host = await fx.host();
  after(() => host.close());
  assert.equal((await host.call("read_file", { path: "d.txt" }, { session: "d" })).status, "ok");
  const r = (await host.call(
    "edit_file",
    { path: "d.txt", old_string: "beta", new_string: "BETA" },
    { session: "d" },
  )) as {
    status: string;
    display?: { diff: string; diff_complete: boolean };
  };
  assert.equal(r.status, "ok", JSON.stringify(r));
  assert.equal(r.display?.diff_complete, true);
  assert.match(r.display?.diff ?? "", /^-beta$/m);
  assert.match(r.display?.diff ?? "", /^\+BETA$/m);
});
