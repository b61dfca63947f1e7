// The pids cgroups reused from run to run as root (CgroupPool, src/sandbox/cgroup.ts): a run never gets
// a cgroup that still holds a process of another, each run's processes are inside its own from the
// first fork, and a fork bomb in a reused cgroup is still bounded. Real cgroups: these run as root,
// where latch uses them (elsewhere the pool is never made, which the first test checks).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { CgroupPool, pidsCgroupParent } from "../../src/sandbox/cgroup.js";
import { PIDS_LIMIT } from "../../src/sandbox/bwrap.js";
import { makeSandboxFixture, markedProcesses, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

/** The bomb's call time limit: room for it to reach the pids limit on a slow machine (3 s missed it there). */
const BOMB_MS = 6000;

const asRoot = process.getuid?.() === 0;
let fx: SandboxFixture;
before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-sbx-pool-");
});
after(() => fx?.cleanup());

const procs = (dir: string) => readFileSync(path.join(dir, "cgroup.procs"), "utf8").trim();

test("a cgroup still holding a process (a run being torn down) is not handed to the next run", async (t) => {
  const parent = pidsCgroupParent();
  if (!asRoot) return assert.equal(parent, undefined, "not root: no cgroups, the rlimit bounds each run");
  assert.ok(parent, "as root here a pids cgroup parent must be found");
  const pool = new CgroupPool(parent, PIDS_LIMIT);
  const first = pool.take();
  const sleeper = spawn("/bin/sleep", ["30"], { stdio: "ignore" });
  t.after(() => sleeper.kill("SIGKILL"));
  writeFileSync(path.join(first, "cgroup.procs"), String(sleeper.pid));
  await pool.give(first);
  const second = pool.take();
  assert.notEqual(second, first, "the busy cgroup stayed in the pool");
  assert.equal(procs(second), "");
  sleeper.kill("SIGKILL");
  await new Promise((r) => sleeper.once("exit", r));
  await pool.give(second);
  // Both are free now: the next two runs get them back, without a new mkdir.
  const again = [pool.take(), pool.take()].sort();
  assert.deepEqual(again, [first, second].sort());
});

test("contained calls as root reuse their cgroups, and a fork bomb in a reused one still stops at the limit", async () => {
  const host = await fx.host();
  const parent = pidsCgroupParent();
  const mine = () =>
    parent === undefined ? [] : readdirSync(parent).filter((e) => e.startsWith(`latch-${process.pid}-`));
  const before = new Set(mine());
  for (let i = 0; i < 5; i++) {
    const out = (await host.call("local_shell", { command: "echo hi" })) as { status: string };
    assert.equal(out.status, "ok", JSON.stringify(out));
  }
  const made = mine().filter((e) => !before.has(e));
  if (!asRoot) return assert.deepEqual(made, []);
  // One per run would be five (removed after each); reuse keeps one or two (one may still be emptying).
  assert.ok(made.length >= 1 && made.length <= 2, `cgroups made for 5 runs: ${made.join(", ")}`);
  fx.write("bomb.sh", "#!/bin/sh\nf() { f | f & }\nf\nsleep 100\n", 0o755);
  const bomb = (await host.call("local_shell", { command: "sh bomb.sh", timeout_ms: BOMB_MS })) as {
    status: string;
    result?: { stderr?: string };
  };
  assert.equal(bomb.status, "ok", JSON.stringify(bomb).slice(0, 300));
  assert.match(String(bomb.result!.stderr), /Cannot fork/, "the limit was reached in a reused cgroup");
  assert.deepEqual(markedProcesses(), []);
  const held = mine().filter((e) => procs(path.join(parent!, e)) !== "");
  assert.deepEqual(held, [], "no cgroup of this process holds a process once the calls are over");
});
