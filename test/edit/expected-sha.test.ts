// Retries that cannot double-apply (issue 27): every write tool takes expected_sha256, the bytes the
// change was made for. The same call sent twice (a client retrying after a lost answer) lands once;
// the second answers already_applied and writes nothing. A different call on the same expected bytes,
// or a stale expected_sha256, is refused naming both hashes; a matching one lands as usual.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { sha256 } from "../../src/fs/text.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host());
after(async () => (await host()).close());
const call = async (tool: string, args: Record<string, unknown>, session = "s"): Promise<any> =>
  (await host()).call(tool, args, { session });
const read = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");
const shaOf = (rel: string) => sha256(readFileSync(path.join(fx.root, rel)));

/** The file's read (for read-before-write) and its sha256, as a client takes it for expected_sha256. */
async function readSha(rel: string, anchors = false): Promise<{ sha: string; text: string }> {
  const r = await call("read_file", { path: rel, ...(anchors ? { anchors: true } : {}) });
  assert.equal(r.status, "ok", JSON.stringify(r));
  return { sha: r.result.sha256, text: r.result.content ?? r.result.text ?? "" };
}

/** Sends `args` twice: the first lands, the retry is already applied and leaves the file's bytes and mtime. */
async function twice(tool: string, args: Record<string, unknown>, file: string, want: string) {
  const first = await call(tool, args);
  assert.equal(first.status, "ok", JSON.stringify(first));
  assert.equal(read(file), want);
  const mtime = statSync(path.join(fx.root, file)).mtimeMs;
  const again = await call(tool, args);
  assert.equal(again.status, "ok", JSON.stringify(again));
  assert.equal(again.result.already_applied, true, JSON.stringify(again));
  assert.equal(again.result.written, false);
  assert.equal(again.result.note, "already applied: the file's bytes equal the result of this edit");
  assert.equal(again.result.sha256, shaOf(file));
  assert.equal(read(file), want, "not applied twice");
  assert.equal(statSync(path.join(fx.root, file)).mtimeMs, mtime, "nothing written");
}

test("write_file, edit_file (several edits), sed and hash_edit sent twice with expected_sha256: land once, then already applied", async () => {
  fx.write({ "w.txt": "old\n", "e.txt": "a b\nc\n", "s.txt": "x x\n", "h.txt": "one\ntwo\n" });
  let { sha } = await readSha("w.txt");
  await twice("write_file", { path: "w.txt", content: "new\n", expected_sha256: sha }, "w.txt", "new\n");

  ({ sha } = await readSha("e.txt"));
  const edits = [
    { old_string: "a", new_string: "A" },
    { old_string: "A b", new_string: "AB" },
  ];
  await twice("edit_file", { path: "e.txt", edits, expected_sha256: sha }, "e.txt", "AB\nc\n");

  ({ sha } = await readSha("s.txt"));
  await twice(
    "sed",
    { path: "s.txt", pattern: "x", replacement: "y", all: true, expected_sha256: sha },
    "s.txt",
    "y y\n",
  );

  const anchored = await call("read_file", { path: "h.txt", anchors: true });
  const pos = /^(1#[^|]+)\|/m.exec(anchored.result.content)?.[1];
  assert.ok(pos, JSON.stringify(anchored.result));
  await twice(
    "hash_edit",
    { path: "h.txt", edits: [{ op: "replace", pos, lines: ["ONE"] }], expected_sha256: anchored.result.sha256 },
    "h.txt",
    "ONE\ntwo\n",
  );
});

test("apply_patch and move_file sent twice with expected_sha256: land once, then already applied", async () => {
  fx.write({ "p1.txt": "p1\n", "p2.txt": "p2\n", "m.txt": "move me\n" });
  const [a, b] = [await readSha("p1.txt"), await readSha("p2.txt")];
  const patch = [
    "*** Begin Patch",
    "*** Update File: p1.txt",
    "@@",
    "-p1",
    "+P1",
    "*** Update File: p2.txt",
    "@@",
    "-p2",
    "+P2",
    "*** End Patch",
  ].join("\n");
  const args = { patch, expected_sha256: { "p1.txt": a.sha, "p2.txt": b.sha } };
  await twice("apply_patch", args, "p1.txt", "P1\n");
  assert.equal(read("p2.txt"), "P2\n");

  const m = await readSha("m.txt");
  const move = { from: "m.txt", to: "moved/m.txt", expected_sha256: m.sha };
  await twice("move_file", move, "moved/m.txt", "move me\n");
  assert.equal(existsSync(path.join(fx.root, "m.txt")), false);
});

test("a different edit on the same expected bytes, or a stale expected_sha256, is refused with both hashes; nothing written", async () => {
  fx.write({ "d.txt": "one\n" });
  const { sha } = await readSha("d.txt");
  const landed = await call("edit_file", { path: "d.txt", old_string: "one", new_string: "ONE", expected_sha256: sha });
  assert.equal(landed.status, "ok");
  // Same expected bytes, another change: not this call's retry.
  const other = await call("edit_file", { path: "d.txt", old_string: "one", new_string: "uno", expected_sha256: sha });
  assert.equal(other.status, "refused", JSON.stringify(other));
  assert.match(
    other.reason,
    new RegExp(`its sha256 is ${shaOf("d.txt")}, expected_sha256 is ${sha}; nothing was written`),
  );
  // Another session sending the very same call: not its write either.
  const elsewhere = await call(
    "edit_file",
    { path: "d.txt", old_string: "one", new_string: "ONE", expected_sha256: sha },
    "t",
  );
  assert.notEqual(elsewhere.result?.already_applied, true, JSON.stringify(elsewhere));
  assert.equal(read("d.txt"), "ONE\n");
  // The current bytes as expected: the change lands.
  const now = await call("edit_file", {
    path: "d.txt",
    old_string: "ONE",
    new_string: "1",
    expected_sha256: shaOf("d.txt"),
  });
  assert.equal(now.status, "ok", JSON.stringify(now));
  assert.equal(read("d.txt"), "1\n");
});

test("delete_file with expected_sha256: a stale one is refused; a retry of a landed delete is refused: the file does not exist", async () => {
  fx.write({ "del.txt": "bye\n" });
  const { sha } = await readSha("del.txt");
  const stale = await call("delete_file", { path: "del.txt", expected_sha256: "0".repeat(64) });
  assert.equal(stale.status, "refused", JSON.stringify(stale));
  assert.ok(existsSync(path.join(fx.root, "del.txt")));
  assert.equal((await call("delete_file", { path: "del.txt", expected_sha256: sha })).status, "ok");
  const again = await call("delete_file", { path: "del.txt", expected_sha256: sha });
  assert.equal(again.status, "refused", JSON.stringify(again));
  assert.match(
    again.reason,
    /`del.txt` does not hold the bytes this call expected: its sha256 is none \(it does not exist\)/,
  );
});

test("expected_sha256 that is not a sha256 is refused by the schema, naming the form", async () => {
  fx.write({ "bad.txt": "x\n" });
  await readSha("bad.txt");
  const r = await call("write_file", { path: "bad.txt", content: "y\n", expected_sha256: "abc" });
  assert.equal(r.status, "error");
  assert.equal(r.code, "EINVAL");
  assert.match(r.message, /sha256 in lowercase hex/);
  assert.equal(read("bad.txt"), "x\n");
});
