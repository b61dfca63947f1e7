// writeAtomic's last step, in a real process through the fault shim (test/helpers/fault-shim.ts): the
// folder's fsync after the rename runs on the thread pool while the caller settles what follows the
// rename (afterRename: the ledger's marker), and the write resolves only once that fsync is done.
// Whether afterRename runs before the fsync starts or during it is up to the threads: not checked.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { buildFaultShim } from "../helpers/fault-shim.js";
import { makeFixture } from "../helpers/fixture.js";

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/write-atomic.ts");
const fx = makeFixture("latch-atomic-");
after(() => fx.cleanup());
const shim = buildFaultShim();
after(() => shim.cleanup());

let n = 0;
/** A folder `wsN` holding f.txt ("old"), and writeAtomic of "new" into it under `fault`. */
function write(fault: string) {
  const name = `ws${++n}`;
  const root = path.join(fx.base, name);
  mkdirSync(root);
  writeFileSync(path.join(root, "f.txt"), "old\n");
  const r = spawnSync(process.execPath, ["--import", "tsx", WRITER, root, "f.txt", "new\n"], {
    encoding: "utf8",
    env: { ...process.env, LD_PRELOAD: shim.lib, LATCH_FAULT: fault.replace("WS", name) },
  });
  const content = readFileSync(path.join(root, "f.txt"), "utf8");
  const temps = readdirSync(root).filter((f) => f.includes(".latch-"));
  return { signal: r.signal, stdout: r.stdout, out: r.stdout + r.stderr, content, temps };
}

test("killed at the folder's fsync: renamed, and the write had not resolved", () => {
  const r = write("fsync:WS:1:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(r.content, "new\n");
  // afterRename may or may not have run by the kill (it runs beside the fsync); the result never came.
  assert.match(r.stdout, /^(after-rename: "new\\n"\n)?$/, "the write resolved before the folder was synced");
});

test("the folder's fsync fails (EIO): afterRename ran after the rename, and the write resolves after the fsync, with its warning", () => {
  const r = write("fsync:WS:1:EIO");
  assert.equal(r.signal, null, r.out);
  const [hook, result] = r.stdout.trim().split("\n");
  assert.equal(hook, 'after-rename: "new\\n"');
  assert.match(JSON.parse(result).warning, /its folder could not be synced \(EIO\)/);
  assert.equal(r.content, "new\n");
  assert.deepEqual(r.temps, []);
});

test("killed at the temp file's fsync: the file is as it was, afterRename never ran", () => {
  const r = write("fsync:.f.txt.latch-*:1:KILL");
  assert.equal(r.signal, "SIGKILL", r.out);
  assert.equal(r.content, "old\n");
  assert.equal(r.stdout, "");
});
