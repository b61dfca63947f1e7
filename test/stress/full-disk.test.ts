// A full disk during a write: the old content survives, no temp file is left, and the error says
// what happened. The workspace is a 1 MiB tmpfs (CI runs as root; elsewhere the mount fails loudly).
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { createHost } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { expectError } from "../helpers/expect.js";

test("write_file and edit_file on a full disk keep the old content and say the disk is full", async () => {
  const fx = makeFixture();
  const small = path.join(fx.base, "small");
  let unmount = () => {};
  after(() => {
    unmount();
    fx.cleanup();
  });
  unmount = mountTmpfs(small, "size=1m");
  const old = "old line\n".repeat(60_000); // 540 KB: a second copy does not fit
  writeFileSync(path.join(small, "f.txt"), old);
  const host = await createHost({
    root: small,
    stateDir: fx.state,
    config: { toolsPolicies: { local_fs: { _max_read_bytes: "2000000", _max_output_bytes: "2000000" } }, agents: {} },
    env: { PATH: process.env.PATH ?? "" },
  });
  try {
    assert.equal((await host.call("read_file", { path: "f.txt" }, { session: "full" })).status, "ok");
    const w = await host.call(
      "write_file",
      { path: "f.txt", content: "new line\n".repeat(60_000) },
      { session: "full" },
    );
    assert.equal(w.status, "error", JSON.stringify(w).slice(0, 300));
    assert.equal(expectError(w).code, "ENOSPC");
    assert.match(expectError(w).message, /disk is full; nothing was changed: `f.txt` still holds its old content/);
    const e = await host.call(
      "edit_file",
      { path: "f.txt", old_string: "old line\n", new_string: "a longer replacement line\n", replace_all: true },
      { session: "full" },
    );
    assert.equal(expectError(e).code, "ENOSPC");
    assert.equal(readFileSync(path.join(small, "f.txt"), "utf8"), old);
    assert.deepEqual(readdirSync(small), ["f.txt"], "no temp file left behind");
  } finally {
    host.close();
  }
});

test("apply_patch whose files fill the disk midway (staged several at once): nothing changed, no temp file left", async () => {
  const fx = makeFixture();
  const small = path.join(fx.base, "small");
  let unmount = () => {};
  after(() => {
    unmount();
    fx.cleanup();
  });
  unmount = mountTmpfs(small, "size=1m");
  writeFileSync(path.join(small, "keep.txt"), "one\n");
  const host = await createHost({
    root: small,
    stateDir: fx.state,
    config: { toolsPolicies: {}, agents: {} },
    env: { PATH: process.env.PATH ?? "" },
  });
  try {
    assert.equal((await host.call("read_file", { path: "keep.txt" }, { session: "p" })).status, "ok");
    // 20 new files of 100 KB each (2 MB) on a 1 MiB disk, and an update before them.
    const body = Array.from({ length: 2000 }, (_, i) => `+line ${i} ${"x".repeat(40)}`);
    const adds = Array.from({ length: 20 }, (_, i) => [`*** Add File: d${i % 3}/new${i}.txt`, ...body]).flat();
    const patch = ["*** Begin Patch", "*** Update File: keep.txt", "@@", "-one", "+ONE", ...adds, "*** End Patch"];
    const out = await host.call("apply_patch", { patch: patch.join("\n") }, { session: "p" });
    assert.equal(out.status, "error", JSON.stringify(out).slice(0, 300));
    assert.equal(expectError(out).code, "ENOSPC");
    assert.equal(readFileSync(path.join(small, "keep.txt"), "utf8"), "one\n", "the update did not land");
    assert.deepEqual(readdirSync(small, { recursive: true }), ["keep.txt"], "no new file, folder or temp file left");
  } finally {
    host.close();
  }
});
