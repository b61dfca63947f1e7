// Every write settles the read ledger around its renames: the marker is reserved before the first
// rename and settled after the last (writeWithMarker in mutate.ts), so a ledger that refuses the marker
// leaves every file as it was, and one that fails after the renames still reports them as written, with
// a warning, and drops the marker. Here apply_patch, move_file, delete_file, write_file, edit_file and
// sed. The faults are real: a trigger in latch.db makes SQLite refuse.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

type Out = { status: string; code?: string; message?: string; reason?: string; result?: Record<string, unknown> };

/** A fresh workspace and host; `refuse` makes latch.db abort every INSERT (or DELETE) on the read markers. */
async function setup(files: Record<string, string>) {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write(files);
  const host: Host = await fx.host();
  for (const rel of Object.keys(files))
    assert.equal((await host.call("read_file", { path: rel }, { session: "s" })).status, "ok");
  const refuse = (what: "INSERT" | "DELETE") => {
    const db = new Database(host.state.db);
    db.exec(`CREATE TRIGGER refuse BEFORE ${what} ON reads BEGIN SELECT RAISE(ABORT, 'ledger refuses'); END`);
    db.close();
  };
  const disk = () =>
    Object.fromEntries(
      readdirSync(fx.root, { recursive: true, encoding: "utf8" })
        .sort()
        .map((rel) => [rel, readFileSync(path.join(fx.root, rel), "utf8")]),
    );
  return { host, refuse, disk };
}

/** After a write whose ledger update failed: a.txt holds ONE, and editing it again needs a fresh read. */
async function assertMarkerDropped(host: Host, disk: () => Record<string, string>): Promise<void> {
  const again = (await host.call(
    "edit_file",
    { path: "a.txt", old_string: "ONE", new_string: "1" },
    { session: "s" },
  )) as Out;
  assert.equal(again.status, "refused", "the marker was dropped: the next write needs a fresh read");
  assert.match(again.reason ?? "", /changed since you read it|you have not read it/);
  assert.equal(disk()["a.txt"], "ONE\n");
}

const PATCH = [
  "*** Begin Patch",
  "*** Update File: a.txt",
  "@@",
  "-one",
  "+ONE",
  "*** Update File: b.txt",
  "@@",
  "-two",
  "+TWO",
  "*** End Patch",
].join("\n");

test("apply_patch when the ledger refuses the new markers: an error, and no file changed", async () => {
  const { host, refuse, disk } = await setup({ "a.txt": "one\n", "b.txt": "two\n" });
  refuse("INSERT");
  const out = (await host.call("apply_patch", { patch: PATCH }, { session: "s" })) as Out;
  assert.equal(out.status, "error", JSON.stringify(out));
  assert.equal(out.code, "ESTATE");
  assert.match(out.message!, /Nothing was written/);
  assert.deepEqual(disk(), { "a.txt": "one\n", "b.txt": "two\n" }, "an error means nothing was written");
});

test("apply_patch when the ledger fails after the renames: written, with a warning to read again", async () => {
  const { host, refuse, disk } = await setup({ "a.txt": "one\n", "b.txt": "two\n" });
  refuse("DELETE");
  const out = (await host.call("apply_patch", { patch: PATCH }, { session: "s" })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.changed, 2);
  assert.match(String(out.result!.warning), /read ledger could not be updated.*Read `a.txt` again/s);
  assert.deepEqual(disk(), { "a.txt": "ONE\n", "b.txt": "TWO\n" });
  await assertMarkerDropped(host, disk);
});

test("move_file when the ledger refuses the moved marker: an error, and the file not moved", async () => {
  const { host, refuse, disk } = await setup({ "a.txt": "one\n" });
  refuse("INSERT");
  const out = (await host.call("move_file", { from: "a.txt", to: "b.txt" }, { session: "s" })) as Out;
  assert.equal(out.status, "error", JSON.stringify(out));
  assert.match(out.message!, /Nothing was written/);
  assert.deepEqual(disk(), { "a.txt": "one\n" });
});

test("move_file over a read file when the ledger fails after the rename: moved, with a warning", async () => {
  const { host, refuse, disk } = await setup({ "a.txt": "one\n", "b.txt": "two\n" });
  refuse("DELETE"); // settling the moved marker removes the session's marker of the replaced b.txt
  const out = (await host.call("move_file", { from: "a.txt", to: "b.txt", overwrite: true }, { session: "s" })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.match(String(out.result!.warning), /Read `b.txt` again/);
  assert.deepEqual(disk(), { "b.txt": "one\n" });
});

test("move_file carries the session's read to the new path", async () => {
  const { host, disk } = await setup({ "a.txt": "one\n" });
  assert.equal((await host.call("move_file", { from: "a.txt", to: "b.txt" }, { session: "s" })).status, "ok");
  const edit = (await host.call(
    "edit_file",
    { path: "b.txt", old_string: "one", new_string: "1" },
    { session: "s" },
  )) as Out;
  assert.equal(edit.status, "ok", JSON.stringify(edit));
  assert.deepEqual(disk(), { "b.txt": "1\n" });
});

// The single-file writes take the same path (writeWithMarker): one case each, both faults.
const SINGLE: [string, Record<string, unknown>][] = [
  ["write_file", { path: "a.txt", content: "ONE\n" }],
  ["edit_file", { path: "a.txt", old_string: "one", new_string: "ONE" }],
  ["sed", { path: "a.txt", pattern: "one", replacement: "ONE" }],
];

for (const [tool, args] of SINGLE) {
  test(`${tool} when the ledger refuses the new marker: an error, and the file unchanged`, async () => {
    const { host, refuse, disk } = await setup({ "a.txt": "one\n" });
    refuse("INSERT");
    const out = (await host.call(tool, args, { session: "s" })) as Out;
    assert.equal(out.status, "error", JSON.stringify(out));
    assert.equal(out.code, "ESTATE");
    assert.match(out.message!, /Nothing was written/);
    assert.deepEqual(disk(), { "a.txt": "one\n" });
  });

  test(`${tool} when the ledger fails after the rename: written, with a warning to read again`, async () => {
    const { host, refuse, disk } = await setup({ "a.txt": "one\n" });
    refuse("DELETE");
    const out = (await host.call(tool, args, { session: "s" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(String(out.result!.warning), /read ledger could not be updated.*Read `a.txt` again/s);
    assert.deepEqual(disk(), { "a.txt": "ONE\n" });
    await assertMarkerDropped(host, disk);
  });
}
