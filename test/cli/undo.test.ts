// latch undo and latch history as a person runs them: real CLI processes over one state dir. A write
// made by `latch call` in one session is listed by history and undone by its id (run as that session);
// --since undoes a session's writes newest first; an undo after the file changed exits 3 with the diff.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-cli-undo-");
after(() => fx.cleanup());
const base = ["--root", fx.root, "--state-dir", fx.state, "--envelope", "auto_edit"];
const at = (rel: string) => path.join(fx.root, rel);

async function call(tool: string, args: unknown, session: string) {
  const r = await runCli(["call", tool, JSON.stringify(args), ...base, "--session", session]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return r.json;
}

test("history lists a session's writes; undo by id restores the bytes, as the session that wrote", async () => {
  writeFileSync(at("h.txt"), "first\n");
  await call("read_file", { path: "h.txt" }, "agent");
  const e = await call("edit_file", { path: "h.txt", old_string: "first", new_string: "second" }, "agent");
  const w = await call("write_file", { path: "made.txt", content: "new\n" }, "agent");
  const h = await runCli(["history", "--json", "--session", "agent", ...base]);
  assert.equal(h.code, 0, h.stderr);
  assert.deepEqual(
    h.json.map((c: { call_id: string; tool: string; files: unknown; undoable: boolean }) => [
      c.call_id,
      c.tool,
      c.files,
      c.undoable,
    ]),
    [
      [w.result.call_id, "write_file", [{ path: "made.txt", change: "created" }], true],
      [e.result.call_id, "edit_file", [{ path: "h.txt", change: "changed" }], true],
    ],
  );
  const text = await runCli(["history", ...base]);
  assert.match(text.stdout, new RegExp(`^${e.result.call_id}  \\S+  agent  edit_file  changed h\\.txt$`, "m"));

  const u = await runCli(["undo", e.result.call_id, ...base]);
  assert.equal(u.code, 0, u.stdout + u.stderr);
  assert.equal(readFileSync(at("h.txt"), "utf8"), "first\n");
  assert.equal(existsSync(at("made.txt")), true, "only the call named is undone");
});

test("undo --session S --since ID undoes the session's writes newest first; a changed file exits 3 with the diff", async () => {
  writeFileSync(at("s.txt"), "one\n");
  await call("read_file", { path: "s.txt" }, "run2");
  const a = await call("edit_file", { path: "s.txt", old_string: "one", new_string: "two" }, "run2");
  await call("edit_file", { path: "s.txt", old_string: "two", new_string: "three" }, "run2");
  await call("write_file", { path: "s2.txt", content: "x\n" }, "run2");
  const u = await runCli(["undo", "--session", "run2", "--since", a.result.call_id, ...base]);
  assert.equal(u.code, 0, u.stdout + u.stderr);
  assert.deepEqual(
    u.json.result.undone.map((c: { tool: string }) => c.tool),
    ["write_file", "edit_file", "edit_file"],
  );
  assert.equal(readFileSync(at("s.txt"), "utf8"), "one\n");
  assert.equal(existsSync(at("s2.txt")), false);

  // The undo was a write: undo it (redo), then let a person change the file, and undo again.
  const redo = await runCli(["undo", u.json.result.call_id, ...base]);
  assert.equal(redo.code, 0, redo.stdout + redo.stderr);
  assert.equal(readFileSync(at("s.txt"), "utf8"), "three\n");
  writeFileSync(at("s.txt"), "three\nby hand\n");
  const refused = await runCli(["undo", redo.json.result.call_id, ...base]);
  assert.equal(refused.code, 3, refused.stdout);
  assert.match(refused.json.reason, /changed since call/);
  assert.match(refused.json.reason, /^-by hand$/m);
  assert.equal(readFileSync(at("s.txt"), "utf8"), "three\nby hand\n");
});

test("undo without an id or with both is a usage error (exit 2)", async () => {
  const none = await runCli(["undo", ...base]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Give a call id/);
});
