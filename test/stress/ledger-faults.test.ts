// A result tells the truth about the disk when the read ledger fails around a write: another process
// holding latch.db's write lock, and the state dir's disk filling up. The new marker is reserved
// before the rename, so a ledger that cannot take it leaves the file untouched and says so; the
// retry, once the fault is gone, lands exactly once.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { createHost } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";
import { mountTmpfs } from "../helpers/tmpfs.js";

const HOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/hold-ledger.ts");
type Err = { status: string; code: string; message: string };

test("an edit while another process holds the ledger's write lock: refused after a bounded wait, file untouched, retry lands once", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "f.txt": "alpha\nbeta\n" });
  const host = await fx.host();
  assert.equal((await host.call("read_file", { path: "f.txt" }, { session: "s" })).status, "ok");
  const holder = spawn(process.execPath, ["--import", "tsx", HOLDER, host.state.db], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once("data", () => resolve());
    holder.once("exit", (c) => reject(new Error(`holder exited ${c}`)));
  });
  const edit = { path: "f.txt", old_string: "beta", new_string: "BETA" };
  try {
    const out = (await host.call("edit_file", edit, { session: "s" })) as Err & { reason?: string };
    assert.notEqual(out.status, "ok", JSON.stringify(out));
    assert.equal(readFileSync(path.join(fx.root, "f.txt"), "utf8"), "alpha\nbeta\n", "not ok: nothing written");
    if (out.status === "error") {
      assert.equal(out.code, "ELEDGERBUSY");
      assert.ok(out.message.includes(host.state.db), out.message);
      assert.match(out.message, /locked by another process for 10 s.*Nothing was written: `f.txt` still holds/s);
    } else {
      // The policy log keeps its head in the same database: it refuses first, before anything runs.
      assert.match(String(out.reason), /database is locked/);
    }
    assert.deepEqual(readdirSync(fx.root), ["f.txt"], "no temp file left");
  } finally {
    holder.stdin.end();
    await new Promise((r) => holder.once("exit", r));
  }
  const fresh = await fx.host(); // a refusing policy log holds its host until restart
  const retry = await fresh.call("edit_file", edit, { session: "s" });
  assert.equal(retry.status, "ok", JSON.stringify(retry));
  assert.equal(readFileSync(path.join(fx.root, "f.txt"), "utf8"), "alpha\nBETA\n", "applied exactly once");
  const again = await fresh.call(
    "edit_file",
    { path: "f.txt", old_string: "alpha", new_string: "ALPHA" },
    { session: "s" },
  );
  assert.equal(again.status, "ok", "the marker follows the landed write");
});

test("the state dir's disk fills during an edit (a real tmpfs): the result says what the disk holds", async () => {
  const fx = makeFixture();
  const stateFs = path.join(fx.base, "statefs");
  let close = () => {};
  let unmount = () => {};
  after(() => {
    close(); // the ledger's file on the tmpfs, before the unmount
    unmount();
    fx.cleanup();
  });
  unmount = mountTmpfs(stateFs, "size=2m");
  fx.write({ "g.txt": "one\ntwo\n" });
  const host = await createHost({
    root: fx.root,
    stateDir: stateFs,
    policyLog: path.join(fx.base, "policy.log"), // outside the full disk: the ledger is what is tried here
    config: { toolsPolicies: {}, agents: {} },
    env: { PATH: process.env.PATH ?? "", HOME: fx.base },
  });
  close = () => host.close();
  assert.equal((await host.call("read_file", { path: "g.txt" }, { session: "t" })).status, "ok");
  // Fill the disk, leaving exactly one page: room for the lock's owner file, none for the ledger's WAL.
  const spare = path.join(stateFs, "spare");
  writeFileSync(spare, Buffer.alloc(4096));
  const filler = path.join(stateFs, "filler");
  for (const size of [65536, 4096]) {
    try {
      for (;;) appendFileSync(filler, Buffer.alloc(size, 1));
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, "ENOSPC");
    }
  }
  rmSync(spare);
  const edit = { path: "g.txt", old_string: "two", new_string: "TWO" };
  const out = (await host.call("edit_file", edit, { session: "t" })) as Err;
  const disk = readFileSync(path.join(fx.root, "g.txt"), "utf8");
  assert.equal(out.status, "error", `${JSON.stringify(out)} (disk: ${JSON.stringify(disk)})`);
  assert.equal(disk, "one\ntwo\n", "an error means nothing was written");
  assert.equal(out.code, "ENOSPC");
  assert.ok(out.message.includes(`state dir \`${host.state.dir}\` is full`), out.message);
  assert.match(out.message, /Nothing was written/);
  assert.deepEqual(readdirSync(fx.root), ["g.txt"], "no temp file left");
  rmSync(filler);
  const retry = await host.call("edit_file", edit, { session: "t" });
  assert.equal(retry.status, "ok", JSON.stringify(retry));
  assert.equal(readFileSync(path.join(fx.root, "g.txt"), "utf8"), "one\nTWO\n", "applied exactly once");
});
