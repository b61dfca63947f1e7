// What a contained process can reach, and what it leaves: no connection to a server on loopback
// (unless `_network = "allow"`), a fork bomb bounded by the pids limit and stopped by the call's
// time limit, `setsid` + `env -i` children gone with the call, and 100 calls that leave no process,
// no mount and no file behind. Real bubblewrap, real processes; the process table is read from /proc.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { pidsCgroupParent } from "../../src/sandbox/cgroup.js";
import { BwrapContainment } from "../../src/sandbox/linux.js";
import { probeContainment } from "../../src/sandbox/probe.js";

/** The bomb's call time limit: room for it to reach the pids limit on a slow machine (3 s missed it there). */
const BOMB_MS = 6000;
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  markedProcesses,
  processesWith,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "./sandbox-fixture.js";

let fx: SandboxFixture;
let host: Host;

type Out = { status: string; result?: Record<string, unknown> };

/** This process's pids cgroups that still hold a process (empty ones wait in the pool for the next run: cgroup.ts). */
function cgroupLeftovers(): string[] {
  const out: string[] = [];
  for (const dir of ["/sys/fs/cgroup/pids", "/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    try {
      for (const e of readdirSync(dir)) {
        if (!e.startsWith(`latch-${process.pid}-`)) continue;
        const procs = readFileSync(path.join(dir, e, "cgroup.procs"), "utf8").trim();
        if (procs !== "") out.push(`${path.join(dir, e)}: ${procs}`);
      }
    } catch {
      continue; // no such hierarchy here
    }
  }
  return out;
}

test("the probe removes the empty pids cgroups of latch processes that ended mid-call", () => {
  const parent = pidsCgroupParent();
  if (process.getuid!() !== 0) return assert.equal(parent, undefined); // cgroups are used as root only
  assert.ok(parent, "as root here a pids cgroup parent must be found");
  const stale = path.join(parent, "latch-999999999-00ff");
  mkdirSync(stale);
  pidsCgroupParent();
  assert.equal(existsSync(stale), false);
});

describe("contained processes", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-sbx-proc-");
    initRepo(fx);
    host = await fx.host();
  });
  after(() => fx?.cleanup());

  test("no connection to a server the test starts on loopback; `_network = allow` connects", async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    const script = `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('CONNECTED');s.end()});s.on('error',e=>console.log('FAILED',e.code))`;
    try {
      const out = (await host.call("local_shell", { command: "node", args: ["-e", script] })) as Out;
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.equal(out.result!.contained, true);
      assert.equal(out.result!.network, false);
      assert.match(String(out.result!.stdout), /FAILED/);
      assert.equal(connections, 0);
      const open = await fx.host({
        config: { toolsPolicies: { local_shell: { _network: "allow" } }, agents: {} },
      });
      const ok = (await open.call("local_shell", { command: "node", args: ["-e", script] })) as Out;
      assert.equal(ok.result!.network, true, JSON.stringify(ok));
      assert.match(String(ok.result!.stdout), /CONNECTED/, "the same call connects when the network is allowed");
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
    assert.deepEqual(markedProcesses(), []);
  });

  test("a fork bomb ends within the call's time limit and leaves nothing behind", async () => {
    // As root RLIMIT_NPROC binds nothing: the bound is the per-run pids cgroup, which must exist here.
    const probe = await probeContainment(SYSTEM_PATH);
    assert.ok(probe.available);
    const c = probe.containment as BwrapContainment;
    assert.ok(
      process.getuid!() !== 0 || c.cgroupParent !== undefined,
      "latch runs as root without a writable pids cgroup: a fork bomb would not be bounded, so this test does not run it",
    );
    fx.write("bomb.sh", "#!/bin/sh\nf() { f | f & }\nf\nsleep 100\n", 0o755);
    const started = Date.now();
    const out = (await host.call("local_shell", { command: "sh bomb.sh", timeout_ms: BOMB_MS })) as Out;
    const took = Date.now() - started;
    assert.equal(out.status, "ok", JSON.stringify(out).slice(0, 500));
    assert.equal(out.result!.contained, true);
    // The pids limit was reached (no fork was left for the bomb); the call then ended by its time limit,
    // or sooner, when the script's own process could not fork and exited, taking its namespace along.
    assert.match(String(out.result!.stderr), /Cannot fork/);
    // the time limit, plus the kill grace (2 s) and the pipe grace (1 s), plus a loaded machine's slack
    assert.ok(took < BOMB_MS + 2000 + 1000 + 10_000, `took ${took} ms`);
    assert.deepEqual(markedProcesses(), []);
    assert.deepEqual(processesWith("bomb.sh"), []);
    assert.deepEqual(cgroupLeftovers(), []);
    assert.equal(decisions(host).at(-1)!.final, "allow");
  });

  test("a fork bomb's first bound is set before the program starts: the pids rlimit, by latch's init", async () => {
    // The init sets RLIMIT_NPROC by a system call (no shell before it): a wrong number would leave it
    // unset. (As root the kernel exempts uid 0 from it; the run's pids cgroup binds: the bomb test above.)
    fx.write("limits.sh", "#!/bin/sh\ncat /proc/self/limits\n", 0o755);
    const out = (await host.call("local_shell", { command: "sh limits.sh" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.contained, true);
    assert.match(String(out.result!.stdout), /^Max processes\s+2048\s+2048\s+processes\s*$/m);
  });

  test("`setsid` + `env -i` children die with the call", async () => {
    const tag = `61.${process.pid}${Date.now() % 100000}`;
    fx.write("escape.sh", `#!/bin/sh\nsetsid env -i /bin/sleep ${tag} &\necho started\n`, 0o755);
    const out = (await host.call("local_shell", { command: "sh escape.sh" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.contained, true);
    assert.match(String(out.result!.stdout), /started/);
    assert.deepEqual(processesWith(tag), [], "the setsid child is gone");
    assert.deepEqual(markedProcesses(), []);
  });

  test("100 contained calls leave 0 processes, 0 mounts and 0 temp files", async () => {
    // The machine is shared: count only mounts of our folders and temp files bwrap or this process could name.
    const mounts = () =>
      readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .filter((l) => l.includes(fx.base) || l.includes("bwrap")).length;
    const tmpOurs = () => readdirSync("/tmp").filter((e) => e.includes("bwrap") || e.includes(String(process.pid)));
    const tree = () => readdirSync(fx.base, { recursive: true, encoding: "utf8" }).sort();
    const before = { mounts: mounts(), tmp: tmpOurs(), tree: tree() };
    const policy = decisions(host).length;
    for (let i = 0; i < 100; i++) {
      const command = i % 2 === 0 ? "git status --short" : "ls -a";
      const out = (await host.call("local_shell", { command })) as Out;
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.equal(out.result!.contained, true);
      assert.equal(out.result!.exit_code, 0, JSON.stringify(out));
    }
    assert.deepEqual(markedProcesses(), []);
    assert.equal(mounts(), before.mounts);
    assert.deepEqual(tmpOurs(), before.tmp);
    // no mount point, lock or temp file left in the workspace, the state dir or the home
    const added = tree().filter((e) => !before.tree.includes(e) && !String(e).startsWith("state/logs"));
    assert.deepEqual(added, []);
    assert.deepEqual(cgroupLeftovers(), []);
    assert.equal(decisions(host).length, policy + 100);
  });
});
