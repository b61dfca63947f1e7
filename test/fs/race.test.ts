// Issue 26: a process in the workspace swaps a folder `d` between a real folder and a symlink to a
// folder outside, in a tight loop, while a tool works on `d/…` through the host over and over. Every
// file operation walks from the root one folder at a time without following a link and acts through
// the folder's descriptor (src/fs/beneath.ts), so each call either works inside or is refused or
// fails with a reason; afterwards the outside tree is exactly as it was, no result holds the outside
// marker, and no temp file is left anywhere.
import assert from "node:assert/strict";
import { linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, test, type TestContext } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { expectRefused } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { forMs, makeOutside, RACE_MS, snapshot, startSwapper, Tally, tempFiles, type Outside } from "./race-fixture.js";

const MODEL = "MODEL-BYTES-issue-26\n";

let fx: Fixture;
let outside: Outside;
let host: Host;

beforeEach(async () => {
  fx = makeFixture("latch-race-");
  outside = makeOutside(fx.base);
  fx.write({ "d/credentials": "inside\n", "d/x.txt": "inside x\n", "d/e.txt": "e0\n", "s/keep.txt": "s\n" });
  host = await fx.host();
});
afterEach(() => fx.cleanup());

/** Race `step` against the swapper for RACE_MS, then make every check of the issue. */
async function race(
  t: TestContext,
  step: (i: number, call: (tool: string, args: object) => Promise<CallResult>) => Promise<void>,
) {
  const before = snapshot(outside.dir);
  const tally = new Tally();
  const call = async (tool: string, args: object) => tally.add(await host.call(tool, args));
  const swapper = await startSwapper(fx.root, outside.dir);
  let steps: number;
  let swaps: number;
  try {
    steps = await forMs(
      RACE_MS,
      (i) => step(i, call),
      () => tally.other > 0,
    );
  } finally {
    swaps = await swapper.stop();
  }
  t.diagnostic(`${steps} steps, ${tally.results.length} calls, ${swaps} swaps:\n${tally.summary()}`);
  tally.assertNoMarker(outside.marker);
  assert.deepEqual(snapshot(outside.dir), before, "nothing was created or changed outside the workspace");
  assert.deepEqual(tempFiles(fx.base), [], "no temp file is left, inside or outside");
  assert.ok(swaps > 0, "the racer swapped the folder");
  assert.ok(tally.other > 0, "the race reached the calls (some were refused or failed)");
  for (const r of tally.results)
    assert.ok(["ok", "refused", "error"].includes(r.status), `every call ends with a status: ${JSON.stringify(r)}`);
  return tally;
}

describe("race: a folder swapped for a link to outside while a tool runs", () => {
  test("read_file never returns a byte from outside", async (t) => {
    await race(t, async (_i, call) => {
      await call("read_file", { path: "d/credentials", force: true });
      await call("read_file", { path: "d/.aws/credentials", force: true });
    });
  });

  test("write_file never lands a file (or a temp file, or a folder) outside", async (t) => {
    await race(t, async (i, call) => {
      await call("write_file", { path: `d/w-${i}.txt`, content: MODEL });
      await call("write_file", { path: `d/new-${i}/deep/w.txt`, content: MODEL });
      const r = await call("read_file", { path: "d/x.txt", force: true });
      if (r.status === "ok") await call("write_file", { path: "d/x.txt", content: MODEL + i });
    });
  });

  test("edit_file never edits a file outside", async (t) => {
    await race(t, async (i, call) => {
      const r = await call("read_file", { path: "d/e.txt", force: true });
      if (r.status !== "ok") return;
      const content = (r.result as { content: string }).content;
      await call("edit_file", { path: "d/e.txt", old_string: content, new_string: `e${i}\n` });
    });
  });

  test("apply_patch never adds, changes or deletes outside", async (t) => {
    await race(t, async (i, call) => {
      await call("apply_patch", { patch: `*** Begin Patch\n*** Add File: d/p-${i}.txt\n+${MODEL}*** End Patch\n` });
      const r = await call("read_file", { path: `d/p-${i}.txt`, force: true });
      if (r.status === "ok")
        await call("apply_patch", {
          patch: `*** Begin Patch\n*** Update File: d/p-${i}.txt\n@@\n-${MODEL.trimEnd()}\n+changed\n*** Move to: d/q-${i}.txt\n*** End Patch\n`,
        });
      await call("apply_patch", { patch: `*** Begin Patch\n*** Delete File: d/x.txt\n*** End Patch\n` });
    });
  });

  test("move_file never moves a file out of (or into) the workspace", async (t) => {
    await race(t, async (i, call) => {
      await call("write_file", { path: `s/m-${i}.txt`, content: MODEL });
      await call("move_file", { from: `s/m-${i}.txt`, to: `d/m-${i}.txt` });
      await call("move_file", { from: "d/credentials", to: `s/stolen-${i}.txt` });
      await call("move_file", { from: `d/m-${i}.txt`, to: `d/sub-${i}/m.txt` });
    });
    for (const f of readdirSync(path.join(fx.root, "s")))
      assert.ok(
        !readFileSync(path.join(fx.root, "s", f), "utf8").includes(outside.marker),
        `moved in from outside: ${f}`,
      );
  });

  test("delete_file never deletes outside", async (t) => {
    await race(t, async (i, call) => {
      await call("write_file", { path: `d/del-${i}.txt`, content: MODEL });
      await call("read_file", { path: `d/del-${i}.txt`, force: true });
      await call("delete_file", { path: `d/del-${i}.txt` });
      const r = await call("read_file", { path: "d/x.txt", force: true });
      if (r.status === "ok") await call("delete_file", { path: "d/x.txt" });
      await call("create_directory", { path: `d/empty-${i}` });
      await call("delete_file", { path: `d/empty-${i}` });
    });
  });

  test("create_directory never makes a folder outside", async (t) => {
    await race(t, async (i, call) => {
      await call("create_directory", { path: `d/c-${i}/deeper/still` });
      await call("create_directory", { path: `d/c${i}` });
    });
  });
});

describe("hard links", () => {
  test("read_file through a hard link made earlier to an outside file is refused, naming the hard link", async () => {
    linkSync(path.join(outside.dir, ".aws/credentials"), path.join(fx.root, "creds"));
    for (const [tool, args] of [
      ["read_file", { path: "creds" }],
      ["read_file_range", { path: "creds", start_line: 1 }],
      ["read_many_files", { paths: ["creds"] }],
    ] as const) {
      const out = await host.call(tool, args);
      assert.ok(!JSON.stringify(out).includes(outside.marker), `${tool} read the outside file: ${JSON.stringify(out)}`);
      if (tool !== "read_many_files") assert.match(expectRefused(out).reason, /2 hard links/, tool);
      else assert.match(JSON.stringify(out), /2 hard links/);
    }
  });

  test("a folder made by a write is made inside, through its parent: never beside a link's target", async () => {
    mkdirSync(path.join(fx.root, "real"));
    writeFileSync(path.join(fx.root, "real/keep"), "k");
    const before = snapshot(outside.dir);
    const out = await host.call("write_file", { path: "real/a/b/c.txt", content: MODEL });
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.deepEqual(snapshot(outside.dir), before);
  });
});
