// move_file, delete_file, create_directory: the write axis, read-before-write, and hostile input (a
// move across the root, into .git, over an unread file; deleting a folder; the control plane).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";
import { callsOf } from "../edit/patch/log.js";

const fx = makeFixture();
after(() => fx.cleanup());
const LOG = path.join(fx.base, "policy.jsonl");
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host({ policyLog: LOG }));
const call = async (tool: string, args: Record<string, unknown>): Promise<any> => (await host()).call(tool, args);
const at = (rel: string) => path.join(fx.root, rel);

describe("move_file", () => {
  test("moves a file into new folders; the read marker follows it, so an edit at the new path works", async () => {
    fx.write({ "m/a.txt": "hello\n" });
    assert.equal((await call("read_file", { path: "m/a.txt" })).status, "ok");
    const r = await call("move_file", { from: "m/a.txt", to: "m/deep/er/b.txt" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(existsSync(at("m/a.txt")), false);
    assert.equal(readFileSync(at("m/deep/er/b.txt"), "utf8"), "hello\n");
    const e = await call("edit_file", { path: "m/deep/er/b.txt", old_string: "hello", new_string: "bye" });
    assert.equal(e.status, "ok", JSON.stringify(e));
    // and the old path no longer counts as read
    fx.write({ "m/a.txt": "new file\n" });
    const w = await call("write_file", { path: "m/a.txt", content: "x" });
    assert.equal(w.status, "refused");
  });

  test("refuses to overwrite unless asked, and then only after a full read of the destination", async () => {
    fx.write({ "o/src.txt": "src\n", "o/dst.txt": "dst\n" });
    let r = await call("move_file", { from: "o/src.txt", to: "o/dst.txt" });
    assert.equal(r.status, "refused");
    assert.match(r.reason, /exists/);
    r = await call("move_file", { from: "o/src.txt", to: "o/dst.txt", overwrite: true });
    assert.equal(r.status, "refused");
    assert.match(r.reason, /not read/);
    assert.equal(readFileSync(at("o/dst.txt"), "utf8"), "dst\n");
    assert.equal((await call("read_file", { path: "o/dst.txt" })).status, "ok");
    r = await call("move_file", { from: "o/src.txt", to: "o/dst.txt", overwrite: true });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.overwrote, true);
    assert.equal(readFileSync(at("o/dst.txt"), "utf8"), "src\n");
    assert.equal(existsSync(at("o/src.txt")), false);
  });

  test("a move across the root is refused both ways; nothing moves", async () => {
    fx.write({ "x/in.txt": "in\n" });
    writeFileSync(path.join(fx.base, "outside.txt"), "out\n");
    let r = await call("move_file", { from: "x/in.txt", to: "../moved-out.txt" });
    assert.equal(r.status, "refused");
    r = await call("move_file", { from: path.join(fx.base, "outside.txt"), to: "x/moved-in.txt" });
    assert.equal(r.status, "refused");
    // through a link to outside, too
    symlinkSync(fx.base, at("x/up"));
    r = await call("move_file", { from: "x/in.txt", to: "x/up/via-link.txt" });
    assert.equal(r.status, "refused");
    assert.equal(readFileSync(at("x/in.txt"), "utf8"), "in\n");
    assert.equal(readFileSync(path.join(fx.base, "outside.txt"), "utf8"), "out\n");
    for (const f of ["moved-out.txt", "via-link.txt"]) assert.equal(existsSync(path.join(fx.base, f)), false);
    assert.equal(existsSync(at("x/moved-in.txt")), false);
    assert.ok(callsOf(LOG, "move_file").filter((c) => c.final === "deny").length >= 3);
  });

  test("moves into or out of .git and the control plane are refused", async () => {
    mkdirSync(at(".git/hooks"), { recursive: true });
    fx.write({ "hook.sh": "#!/bin/sh\n", ".git/config": "[core]\n" });
    assert.equal((await call("move_file", { from: "hook.sh", to: ".git/hooks/pre-commit" })).status, "refused");
    assert.equal((await call("move_file", { from: ".git/config", to: "config.txt" })).status, "refused");
    assert.equal(
      (await call("move_file", { from: "hook.sh", to: path.join(fx.state, "latch.db"), overwrite: true })).status,
      "refused",
    );
    // The resolver's one rule for write targets (fs/protected.ts) covers every file tool, any case.
    assert.equal((await call("move_file", { from: "hook.sh", to: ".GIT/hooks/pre-commit" })).status, "refused");
    assert.equal((await call("create_directory", { path: ".git/hooks/new" })).status, "refused");
    assert.equal((await call("read_file", { path: ".git/config" })).status, "ok");
    assert.equal((await call("delete_file", { path: ".git/config" })).status, "refused");
    assert.equal(existsSync(at(".git/hooks/pre-commit")), false);
    assert.equal(existsSync(at(".GIT")), false);
    assert.equal(existsSync(at(".git/hooks/new")), false);
    assert.ok(existsSync(at(".git/config")));
    assert.ok(existsSync(at("hook.sh")));
  });

  test("a folder is not moved; a dry run shows the rename and moves nothing", async () => {
    fx.write({ "dirmv/a.txt": "a\n" });
    assert.equal((await call("move_file", { from: "dirmv", to: "dirmv2" })).status, "refused");
    const r = await call("move_file", { from: "dirmv/a.txt", to: "dirmv/b.txt", dry_run: true });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual(r.result.files, [{ path: "dirmv/b.txt", from: "dirmv/a.txt", action: "move" }]);
    assert.match(r.result.diff, /--- a\/dirmv\/a.txt\n\+\+\+ b\/dirmv\/b.txt/);
    assert.ok(existsSync(at("dirmv/a.txt")));
    assert.equal(existsSync(at("dirmv/b.txt")), false);
  });
});

describe("delete_file", () => {
  test("needs a read of the current content; then deletes; a changed file is refused", async () => {
    fx.write({ "d/a.txt": "a\n", "d/b.txt": "b\n" });
    let r = await call("delete_file", { path: "d/a.txt" });
    assert.equal(r.status, "refused");
    assert.ok(existsSync(at("d/a.txt")));
    await call("read_file", { path: "d/a.txt" });
    r = await call("delete_file", { path: "d/a.txt" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(existsSync(at("d/a.txt")), false);
    await call("read_file", { path: "d/b.txt" });
    writeFileSync(at("d/b.txt"), "changed\n");
    r = await call("delete_file", { path: "d/b.txt" });
    assert.equal(r.status, "refused");
    assert.equal(readFileSync(at("d/b.txt"), "utf8"), "changed\n");
  });

  test("deleting a folder: refused unless empty; the root and .git never", async () => {
    fx.write({ "full/x.txt": "x\n" });
    mkdirSync(at("empty/inner"), { recursive: true });
    let r = await call("delete_file", { path: "full" });
    assert.equal(r.status, "refused");
    assert.match(r.reason, /1 entry/);
    assert.deepEqual(readdirSync(at("full")), ["x.txt"]);
    r = await call("delete_file", { path: "empty" });
    assert.equal(r.status, "refused");
    r = await call("delete_file", { path: "empty/inner" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(existsSync(at("empty/inner")), false);
    assert.equal((await call("delete_file", { path: "." })).status, "refused");
    mkdirSync(at(".git/objects"), { recursive: true });
    assert.equal((await call("delete_file", { path: ".git/objects" })).status, "refused");
    assert.ok(existsSync(at(".git/objects")));
    assert.equal((await call("delete_file", { path: LOG })).status, "refused");
    assert.ok(existsSync(LOG));
  });

  test("a dry run shows the removal and deletes nothing", async () => {
    fx.write({ "dd/a.txt": "gone?\n" });
    await call("read_file", { path: "dd/a.txt" });
    const r = await call("delete_file", { path: "dd/a.txt", dry_run: true });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.match(r.result.diff, /-gone\?/);
    assert.ok(existsSync(at("dd/a.txt")));
    assert.equal((await call("delete_file", { path: "dd/missing.txt" })).status, "error");
  });
});

describe("create_directory", () => {
  test("makes parents; an existing folder is fine; a file in the way is an error", async () => {
    let r = await call("create_directory", { path: "c/a/b" });
    assert.equal(r.status, "ok");
    assert.equal(r.result.created, true);
    r = await call("create_directory", { path: "c/a/b" });
    assert.equal(r.result.created, false);
    fx.write({ "c/file": "f\n" });
    r = await call("create_directory", { path: "c/file/sub" });
    assert.equal(r.status, "error");
    assert.equal(existsSync(at("c/file/sub")), false);
  });

  test("outside the root, into .git, through a link to outside: refused", async () => {
    for (const p of ["../made-outside", ".git/evil", "x/up/made-via-link"]) {
      const r = await call("create_directory", { path: p });
      assert.equal(r.status, "refused", p);
    }
    assert.equal(existsSync(path.join(fx.base, "made-outside")), false);
    assert.equal(existsSync(path.join(fx.base, "made-via-link")), false);
  });

  test("a dry run makes nothing", async () => {
    const r = await call("create_directory", { path: "dry-dir", dry_run: true });
    assert.equal(r.result.written, false);
    assert.equal(existsSync(at("dry-dir")), false);
  });
});
