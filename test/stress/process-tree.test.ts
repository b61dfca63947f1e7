// Process trees through local_shell (host.call, `shell: true`): a line whose children and
// grandchildren trap SIGTERM, some of them in sessions of their own (setsid, and a double fork whose
// middle process exits), is stopped 100 times by its timeout and 100 times by an abort. After every
// run /proc holds no process of the tree. A process that clears its environment and starts a session
// of its own dies with a contained call (its pid namespace); uncontained it escapes, pinned below.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { expectOk } from "../helpers/expect.js";
import { livingProcesses, type Proc } from "../helpers/procs.js";
import { shq } from "../helpers/quote.js";

/** Rounds per way of stopping: 100 with LATCH_STRESS=1 (`npm run test:stress`), 20 in `npm test`. */
const RUNS = process.env.LATCH_STRESS === "1" ? 100 : 20;
// Each run waits out the 2 s SIGTERM grace (in the box too, since bwrap no longer dies of the SIGTERM
// and takes the box down at once): 20 at once, as the file runs alone (scripts/test.mjs SERIAL). A
// round whose tree never formed, once blamed on 20 at once, was the rounds' own /proc scans starving
// the event loop: see treeTable.
const PARALLEL = 20;
const MARK = "LATCH_TREE_MARK";
// Six sleeps, all ignoring SIGTERM: in the line's own group, in a shell and in the shell it starts, in
// a subshell, in a session of their own (setsid), and orphaned in a session of their own (the middle
// shell exits);
// and a shell that cleared its environment and left the session (its argv carries the mark).
const TREE = `trap '' TERM
sh -c 'trap "" TERM; sh -c "trap \\"\\" TERM; sleep 1000; :" & sleep 1000; :' &
(trap '' TERM; sleep 1000; :) &
setsid sh -c 'trap "" TERM; sleep 1000; :' > /dev/null 2>&1 &
setsid sh -c '(trap "" TERM; sleep 1000; :) &' > /dev/null 2>&1 &
env -i setsid sh -c 'trap "" TERM; while :; do sleep 1; done' "${MARK}=$${MARK}" > /dev/null 2>&1 &
echo ready
sleep 1000
`;
const SLEEPS = 6;

let fx: Fixture;
let host: Host;
before(async () => {
  fx = makeFixture("latch-tree-");
  fx.write({ "tree.sh": TREE });
  host = await fx.host({ approver: { name: "yes", request: async () => ({ approved: true, by: "test" }) } });
});
after(() => fx.cleanup());

type Marked = { pid: number; comm: string; inArgv: boolean };

/** Living processes whose environment or argv holds `needle`, with their command names. */
function marked(needle: string, among: readonly Proc[] = livingProcesses()): Marked[] {
  return among
    .filter((p) => p.environ.includes(needle) || p.argv.join("\0").includes(needle))
    .map((p) => ({ pid: p.pid, comm: p.comm, inArgv: p.argv.join("\0").includes(needle) }));
}

/**
 * The table the rounds wait on, read once for all of them (at most every 20 ms), and only the
 * environment and argv of `sh` and `sleep`, what a standing tree is judged by. Each round reading all
 * of /proc every 20 ms itself (ten at once, a few thousand files each time) kept the event loop so busy
 * that a call's sandbox waited seconds, then the whole minute, for the end of its seccomp filter, which
 * node writes in the loop's next poll phase: "the tree never stood whole" (seen in npm test).
 */
const treeTable = (() => {
  let last: { at: number; procs: Proc[] } | undefined;
  return (): Proc[] => {
    if (!last || Date.now() - last.at >= 20)
      last = { at: Date.now(), procs: livingProcesses((comm) => comm === "sh" || comm === "sleep") };
    return last.procs;
  };
})();

function line(id: string): string {
  return `${MARK}=${id} exec sh tree.sh`;
}

async function pool(n: number, run: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < n) await run(next++);
    }),
  );
}

async function untilSleeps(id: string, ac: AbortController, done: () => boolean): Promise<void> {
  // Abort only once the whole tree stands, so every round kills a complete tree (a call that ended
  // first fails its round below, rather than leaving this loop waiting).
  const standing = () => {
    const m = marked(`${MARK}=${id}`, treeTable());
    return (
      m.filter((p) => p.comm === "sleep").length === SLEEPS && m.some((p) => p.inArgv && !p.comm.includes("sleep"))
    );
  };
  while (!done() && !standing()) await new Promise((r) => setTimeout(r, 20));
  ac.abort();
}

test(`${RUNS} runs stopped by abort: no process of the tree is left`, { timeout: 600_000 }, async () => {
  await pool(RUNS, async (i) => {
    const id = `abort-${i}-${randomBytes(4).toString("hex")}`;
    const ac = new AbortController();
    let done = false;
    const watching = untilSleeps(id, ac, () => done);
    const out = await host.call(
      "local_shell",
      { command: line(id), shell: true, timeout_ms: 60_000 },
      { session: "tree", signal: ac.signal },
    );
    done = true;
    await watching;
    assert.equal(out.status, "ok", JSON.stringify(out));
    const r = expectOk<{ cancelled: boolean; stdout: string }>(out).result;
    assert.equal(
      r.cancelled,
      true,
      `round ${i}: the tree never stood whole, so the call was not aborted: ${JSON.stringify(r)}`,
    );
    assert.equal(r.stdout, "ready\n");
    assert.deepEqual(marked(`${MARK}=${id}`), [], `round ${i}: processes of the tree outlived the call`);
  });
});

test(`${RUNS} runs stopped by their timeout: no process of the tree is left`, { timeout: 600_000 }, async () => {
  await pool(RUNS, async (i) => {
    const id = `timeout-${i}-${randomBytes(4).toString("hex")}`;
    // 1.5 s is far more than a few forks take, so the tree stands before the timeout: checked below.
    const out = await host.call(
      "local_shell",
      { command: line(id), shell: true, timeout_ms: 1500 },
      { session: "tree" },
    );
    assert.equal(out.status, "ok", JSON.stringify(out));
    const r = expectOk<{ timed_out: boolean; stdout: string }>(out).result;
    assert.equal(r.timed_out, true);
    assert.equal(r.stdout, "ready\n", `round ${i}: the tree was not up before the timeout`);
    assert.deepEqual(marked(`${MARK}=${id}`), [], `round ${i}: processes of the tree outlived the call`);
  });
});

test("contained: a process that clears its environment, calls setsid and outlives its parent dies with the call", async () => {
  // The sandbox gives every call its own pid namespace: when the call ends, the kernel ends all of it.
  // The line waits on a fifo (in the sandbox's own /tmp) until the escaping shell runs, so an escape
  // that never started (setsid missing, say) cannot pass for one that was stopped.
  const tag = `1000.${randomBytes(3).readUIntBE(0, 3)}`;
  const out = await host.call(
    "local_shell",
    {
      command: `mkfifo /tmp/up; env -i setsid sh -c 'echo up > /tmp/up; exec sleep ${tag}' > /dev/null 2>&1 & read x < /tmp/up; echo "started $x"`,
      shell: true,
      timeout_ms: 20_000,
    },
    { session: "tree" },
  );
  assert.equal(out.status, "ok", JSON.stringify(out));
  const r = expectOk<{ contained: boolean; stdout: string }>(out).result;
  assert.equal(r.contained, true, JSON.stringify(out));
  assert.equal(r.stdout, "started up\n", "the escaping shell ran inside the call");
  let left = marked(`sleep\0${tag}`);
  for (let k = 0; k < 100 && left.length > 0; k++) {
    await new Promise((r) => setTimeout(r, 20));
    left = marked(`sleep\0${tag}`);
  }
  for (const p of left) process.kill(p.pid, "SIGKILL");
  assert.deepEqual(left, [], "the escaped sleep outlived its contained call");
});

test("known limit, uncontained (_containment = off): that process escapes", async () => {
  // Found by session, mark and parenthood only; a process that drops all three is out of reach
  // without a pid namespace (docs/security.md, known limits).
  const off = await fx.host({
    config: { toolsPolicies: { local_shell: { _containment: "off" } }, agents: {} },
    approver: { name: "yes", request: async () => ({ approved: true, by: "test" }) },
  });
  const tag = `1000.${randomBytes(3).readUIntBE(0, 3)}`;
  // The line waits (a fifo) until the escapee has left the session: a line that ended first would
  // have its group killed with the escapee still in it, under load (seen once in five loaded runs).
  const fifo = path.join(fx.base, `up-${tag}`);
  const out = await off.call(
    "local_shell",
    {
      command: `mkfifo ${shq(fifo)}; env -i setsid sh -c 'echo up > "$0"; exec sleep ${tag}' ${shq(fifo)} > /dev/null 2>&1 & read x < ${shq(fifo)}; echo "started $x"`,
      shell: true,
      timeout_ms: 20_000,
    },
    { session: "tree" },
  );
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(expectOk<{ stdout: string }>(out).result.stdout, "started up\n", JSON.stringify(out));
  let escaped: { pid: number }[] = [];
  for (let k = 0; k < 100 && escaped.length === 0; k++) {
    escaped = marked(`sleep\0${tag}`);
    if (escaped.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  for (const p of escaped) process.kill(p.pid, "SIGKILL");
  assert.equal(
    escaped.length,
    1,
    "uncontained, this escape outlives the call; if it no longer does, the limit is closed: update the docs and this test",
  );
});
