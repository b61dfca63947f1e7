// Bounded processes, with real processes: output caps with flat memory, timeouts and aborts that
// reach grandchildren ignoring SIGTERM (checked by process group in /proc), invalid UTF-8, exit codes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { HeadTailCapture, StrictCapture } from "../../src/process/capture.js";
import { runBounded } from "../../src/process/exec.js";
import { livingInGroup, livingInSession } from "../../src/process/procs.js";
import localShell from "../../src/tools/local_shell.js";
import { makeFixture } from "../helpers/fixture.js";
import { callTool, makeToolEnv } from "../shell/tool-env.js";

const fx = makeFixture("latch-exec-");
after(() => fx.cleanup());
const env = () => makeToolEnv({ root: fx.root });

describe("bounded processes", () => {
  test("`yes` for 2 s: output bounded to head and tail, memory flat, the pipe kept draining", async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const out = await callTool(localShell, { command: "yes", timeout_ms: 2000 }, env());
    clearInterval(sampler);
    assert.equal(out.status, "ok");
    const r = out.status === "ok" ? out.result : undefined;
    assert.equal(r.timed_out, true);
    assert.ok(Buffer.byteLength(r.stdout) < 64 * 1024 + 200, `stdout is ${Buffer.byteLength(r.stdout)} bytes`);
    assert.match(r.stdout, /^y\ny\n/);
    assert.match(r.stdout, /latch cut \d+ bytes from the middle of stdout/);
    assert.match(r.stdout, /y\n$/);
    // The child kept writing for 2 s: far more than was kept (64 times the cap at the very least).
    assert.ok(r.truncated.stdout > 4 * 1024 * 1024, `only ${r.truncated.stdout} bytes were cut`);
    // Flat: what RSS grows by is garbage between collections (chunks node has not freed yet), bounded
    // whatever passes through. On an idle machine `yes` pushes 2.5 GB in 2 s and RSS grew 82 MB; a
    // capture that kept the output would grow by the gigabytes.
    assert.ok(
      peak - before < 192 * 1024 * 1024,
      `rss grew ${peak - before} bytes while ${r.truncated.stdout} bytes passed`,
    );
    // Growth is a fixed amount of garbage, not a share of the throughput: under load `yes` pushes
    // less, so the share only binds once more than 1 GiB has passed.
    assert.ok(
      peak - before < Math.max(128 * 1024 * 1024, r.truncated.stdout / 8),
      `rss grew ${peak - before} bytes while ${r.truncated.stdout} bytes passed`,
    );
    assert.deepEqual(r.steps, [{ argv: ["yes"], cwd: fx.root, exit_code: 143, signal: "SIGTERM" }]);
  });

  test("a timeout kills grandchildren that trap SIGTERM: nothing is left in the process group", async () => {
    const script = "trap '' TERM; (trap '' TERM; sleep 100) & (trap '' TERM; exec sleep 100) & sleep 100; wait";
    const o = await runBounded({
      file: "/bin/sh",
      args: ["-c", script],
      cwd: fx.root,
      env: process.env,
      deadline: Date.now() + 1500, // time for the shell to set its traps on a loaded machine
      signal: new AbortController().signal,
      stdout: new HeadTailCapture(1024, "stdout"),
      stderr: new HeadTailCapture(1024, "stderr"),
    });
    assert.equal(o.timedOut, true);
    assert.ok(o.pgid !== undefined);
    assert.equal(o.signal, "SIGKILL"); // SIGTERM was ignored, so SIGKILL came 2 s later
    assert.deepEqual(livingInGroup(o.pgid), []);
    assert.deepEqual(livingInSession(o.pgid), []);
  });

  test("through local_shell: the group the line ran in is empty when the call returns", async () => {
    const out = await callTool(
      localShell,
      {
        command: "echo $$ > pid; trap '' TERM; (trap '' TERM; sleep 100) & sleep 100 & wait",
        shell: true,
        timeout_ms: 1500,
      },
      env(),
    );
    assert.equal(out.status, "ok");
    assert.equal(out.status === "ok" && out.result.timed_out, true);
    const pgid = Number(readFileSync(path.join(fx.root, "pid"), "utf8"));
    assert.ok(pgid > 1);
    assert.deepEqual(livingInGroup(pgid), []);
  });

  test("a grandchild in a process group of its own (GNU timeout makes one) is reached through the session", async () => {
    const out = await callTool(
      localShell,
      { command: "echo $$ > pid3; timeout 100 sleep 100", shell: true, timeout_ms: 1500 },
      env(),
    );
    assert.equal(out.status === "ok" && out.result.timed_out, true);
    const sid = Number(readFileSync(path.join(fx.root, "pid3"), "utf8"));
    assert.deepEqual(livingInSession(sid), []);
  });

  test("a background process left behind by a finished line is killed too", async () => {
    const out = await callTool(
      localShell,
      { command: "echo $$ > pid2; sleep 100 > /dev/null 2>&1 &", shell: true },
      env(),
    );
    assert.equal(out.status === "ok" && out.result.exit_code, 0);
    const pgid = Number(readFileSync(path.join(fx.root, "pid2"), "utf8"));
    assert.deepEqual(livingInGroup(pgid), []);
  });

  test("an abort in the middle of `sleep 30` returns within 1 s, by SIGTERM", async () => {
    const ac = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      ac.abort();
    }, 300);
    const out = await callTool(
      localShell,
      { command: "sleep 30 && echo never" },
      makeToolEnv({ root: fx.root, signal: ac.signal }),
    );
    const after = Date.now() - abortedAt;
    assert.equal(out.status, "ok");
    const r = out.status === "ok" ? out.result : undefined;
    assert.equal(r.cancelled, true);
    assert.deepEqual(
      r.steps.map((s: { exit_code?: number; skipped?: boolean }) => s.exit_code ?? (s.skipped ? "skipped" : "?")),
      [143, "skipped"],
    );
    assert.ok(after < 1000, `returned ${after} ms after the abort`);
  });

  test("invalid UTF-8 is decoded with replacement characters and flagged", async () => {
    const out = await callTool(localShell, { command: "printf", args: ["ok\\377\\376end"] }, env());
    assert.equal(out.status, "ok");
    const r = out.status === "ok" ? out.result : undefined;
    assert.equal(r.binary_output, true);
    assert.equal(r.stdout, "ok\ufffd\ufffdend");
    const clean = await callTool(localShell, { command: "printf", args: ["h\\303\\251llo"] }, env());
    assert.equal(clean.status === "ok" && clean.result.binary_output, false);
    assert.equal(clean.status === "ok" && clean.result.stdout, "héllo");
  });

  test("a nonzero exit code is a normal result, and && / || follow it", async () => {
    const out = await callTool(
      localShell,
      { command: "sh -c 'exit 3' && echo no; sh -c 'exit 4' || echo recovered" },
      env(),
    );
    assert.equal(out.status, "ok");
    const r = out.status === "ok" ? out.result : undefined;
    assert.equal(r.exit_code, 0);
    assert.equal(r.stdout, "recovered\n");
    assert.deepEqual(
      r.steps.map((s: { exit_code?: number; skipped?: boolean }) => (s.skipped ? "skipped" : s.exit_code)),
      [3, "skipped", 4, 0],
    );
    const three = await callTool(localShell, { command: "sh", args: ["-c", "echo out; echo err >&2; exit 3"] }, env());
    assert.equal(three.status === "ok" && three.result.exit_code, 3);
    assert.equal(three.status === "ok" && three.result.stderr, "err\n");
  });

  test("a UTF-8 character split across chunks is not flagged, and the cut keeps whole characters", () => {
    const c = new HeadTailCapture(10, "stdout");
    const bytes = Buffer.from("ééééééééééé"); // 22 bytes, 2 per character
    for (const b of bytes) c.write(Buffer.from([b]));
    const r = c.result();
    assert.equal(r.invalidUtf8, false);
    assert.equal(r.bytes, 22);
    assert.match(r.text, /^é+\n\[… latch cut \d+ bytes/);
    assert.ok(!r.text.includes("\ufffd"));
    const s = new StrictCapture(4);
    assert.equal(s.write(Buffer.from("abcd")), true);
    assert.equal(s.write(Buffer.from("e")), false);
  });
});
