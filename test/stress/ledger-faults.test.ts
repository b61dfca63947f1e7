// A result tells the truth about the disk when the read ledger fails around a write: another process
// holding latch.db's write lock, and the state dir's disk filling up. The new marker is reserved
// before the rename, so a ledger that cannot take it leaves the file untouched and says so; the
// retry, once the fault is gone, lands exactly once.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { createHost } from "../../src/host/create-host.js";
import { runCli } from "../helpers/cli.js";
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
  const fresh = host; // the fault passed: the same host serves again, no restart
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

test("latch.db write-locked by another process: calls are refused with the reason while it holds, served after, no restart", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "r.txt": "read me\n" });
  const logFile = path.join(fx.base, "policy.log");
  const host = await fx.host({ policyLog: logFile });
  assert.equal((await host.call("read_file", { path: "r.txt" })).status, "ok");
  const holder = spawn(process.execPath, ["--import", "tsx", HOLDER, host.state.db], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once("data", () => resolve());
    holder.once("exit", (c) => reject(new Error(`holder exited ${c}`)));
  });
  const lines = () => readFileSync(logFile, "utf8").split("\n").length - 1;
  try {
    // A write: its decision is synced, its head cannot be kept: it does not run.
    const w = (await host.call("write_file", { path: "w.txt", content: "x" })) as Err & {
      reason: string;
      gate: string;
    };
    assert.equal(w.status, "refused", JSON.stringify(w));
    assert.equal(w.gate, "log");
    assert.match(w.reason, /head cannot be kept .*database is locked.*refused while this lasts/);
    assert.equal(existsSync(path.join(fx.root, "w.txt")), false, "the write did not run");
    // Every call while the lock is held, reads too, is refused with the reason; none is logged.
    const before = lines();
    for (const [tool, args] of [
      ["read_file", { path: "r.txt" }],
      ["list_dir", { path: "." }],
      ["write_file", { path: "w.txt", content: "x" }],
    ] as const) {
      const r = (await host.call(tool, args)) as Err & { reason: string; gate: string };
      assert.equal(r.status, "refused", `${tool}: ${JSON.stringify(r)}`);
      assert.match(r.reason, /database is locked/);
    }
    assert.equal(lines(), before, "nothing was logged for the refused calls");
    assert.equal(existsSync(path.join(fx.root, "w.txt")), false);
  } finally {
    holder.stdin.end();
    await new Promise((r) => holder.once("exit", r));
  }
  // Released: the same host serves at once.
  assert.equal((await host.call("read_file", { path: "r.txt" })).status, "ok");
  assert.equal((await host.call("write_file", { path: "w.txt", content: "x" })).status, "ok");
  assert.equal(readFileSync(path.join(fx.root, "w.txt"), "utf8"), "x");
  host.close();
  const records = readFileSync(logFile, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l).record as Record<string, unknown>);
  const gaps = records.filter((r) => r.type === "anchor_gap");
  assert.equal(gaps.length, 1, "the lapse in keeping the head is on record, once");
  assert.match(String(gaps[0].reason), /database is locked/);
  const verify = await runCli(["log", "verify", "--state-dir", fx.state, logFile]);
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
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
  assert.equal(disk, "one\ntwo\n", `nothing was written: ${JSON.stringify(out)}`);
  // The last page goes to whichever state write comes first. Since edit_file's decision sync overlaps
  // its write, that may be the log head's anchor (the call is then refused by the log, before any
  // write) or the ledger (an ENOSPC error naming the state dir): both must say the disk is full.
  if (out.status === "refused") {
    const r = out as unknown as { reason: string; gate: string };
    assert.equal(r.gate, "log", JSON.stringify(out));
    assert.match(r.reason, /database or disk is full\); nothing ran/);
  } else {
    assert.equal(out.status, "error", JSON.stringify(out));
    assert.equal(out.code, "ENOSPC");
    assert.ok(out.message.includes(`state dir \`${host.state.dir}\` is full`), out.message);
    assert.match(out.message, /Nothing was written/);
  }
  assert.deepEqual(readdirSync(fx.root), ["g.txt"], "no temp file left");
  rmSync(filler);
  const retry = await host.call("edit_file", edit, { session: "t" });
  assert.equal(retry.status, "ok", JSON.stringify(retry));
  assert.equal(readFileSync(path.join(fx.root, "g.txt"), "utf8"), "one\nTWO\n", "applied exactly once");
});
