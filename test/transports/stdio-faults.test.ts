// Transport faults over real stdio against the built `latch mcp`: every malformed message gets the
// spec's answer, oversized messages and paths get a bounded answer, and a client that goes away
// (stdout broken, stdin closed) ends the running calls, not silently: no process is left, the policy
// log verifies, and a line on stderr says why latch stopped.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { outcomes, policyLogs, processesRunning, RawStdio, RUN_TAG } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());
const serverArgs = (state: string) => ["--root", fx.root, "--state-dir", state, "--yes"];

describe("malformed JSON-RPC gets the spec's codes, short messages, and always an answer", () => {
  test("parse error, not an object, bad id, bad jsonrpc, bad arguments, bad _meta", async () => {
    fx.write({ "a.txt": "hello\n" });
    const s = new RawStdio(serverArgs(path.join(fx.base, "st-malformed")));
    try {
      await s.init();
      const nulls = () => s.replies.filter((r) => r.id === null);
      s.write("this is not json");
      assert.ok(await waitFor(() => nulls().length === 1), "the parse error is answered");
      assert.equal(nulls()[0].error?.code, -32700, JSON.stringify(nulls()[0]));
      const cases: [string, unknown, number][] = [
        ["batch", [1, 2], -32600],
        ["no jsonrpc", { id: "v", method: "ping" }, -32600],
        [
          "arguments a string",
          { jsonrpc: "2.0", id: "args", method: "tools/call", params: { name: "read_file", arguments: "a.txt" } },
          -32602,
        ],
        ["params a number", { jsonrpc: "2.0", id: "params", method: "tools/call", params: 5 }, -32602],
        ["no tool name", { jsonrpc: "2.0", id: "name", method: "tools/call", params: { arguments: {} } }, -32602],
        [
          "_meta a string",
          {
            jsonrpc: "2.0",
            id: "meta",
            method: "tools/call",
            params: { name: "read_file", arguments: { path: "a.txt" }, _meta: "x" },
          },
          -32602,
        ],
        [
          "progressToken an object",
          {
            jsonrpc: "2.0",
            id: "token",
            method: "tools/call",
            params: { name: "read_file", arguments: { path: "a.txt" }, _meta: { progressToken: {} } },
          },
          -32602,
        ],
      ];
      for (const [what, msg, code] of cases) {
        s.send(msg);
        const id = Array.isArray(msg) ? null : ((msg as { id: string }).id ?? null);
        const before = nulls().length;
        const r = id === null ? (await waitFor(() => nulls().length > before), nulls()[before]) : await s.reply(id);
        assert.equal(r.error?.code, code, `${what}: ${JSON.stringify(r)}`);
        assert.ok(r.error.message.length < 400, `${what}: a short message, got ${r.error.message.length} chars`);
        if (code === -32602) assert.doesNotMatch(r.error.message, /"code":|\[\s*\{/, `${what}: no schema dump`);
      }
      s.send({ jsonrpc: "2.0", id: {}, method: "ping" });
      assert.ok(await waitFor(() => nulls().length === 3), "a bad id is answered");
      assert.equal(nulls()[2].error?.code, -32600, JSON.stringify(nulls()[2]));
      // And the server still works.
      const ok = await s.call("ok", "read_file", { path: "a.txt" });
      assert.equal(ok.result?.isError, undefined, JSON.stringify(ok));
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });
});

describe("sizes", () => {
  test("an 11 MiB write_file is written; a 65 MiB message gets -32600 with its id; the server answers after", async () => {
    const s = new RawStdio(serverArgs(path.join(fx.base, "st-size")));
    try {
      await s.init();
      const eleven = "x".repeat(11 << 20);
      const w = await s.call("w11", "write_file", { path: "eleven.txt", content: eleven });
      assert.equal(w.result?.isError, undefined, JSON.stringify(w).slice(0, 400));
      assert.equal(readFileSync(path.join(fx.root, "eleven.txt"), "utf8").length, 11 << 20);

      const huge = JSON.stringify({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "huge.txt", content: "y".repeat(65 << 20) } },
        id: "w65", // where the SDK's client puts it: last
      });
      s.write(huge);
      const r = await s.reply("w65");
      assert.equal(r.error?.code, -32600, JSON.stringify(r).slice(0, 400));
      assert.match(r.error.message, /64\.0 MiB/);
      assert.equal(existsSync(path.join(fx.root, "huge.txt")), false);
      const ping = await s.request("after", "ping");
      assert.deepEqual(ping.result, {});
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("a 10 MB path: the error quotes it cut short, and the server answers after", async () => {
    const s = new RawStdio(serverArgs(path.join(fx.base, "st-path")));
    try {
      await s.init();
      const r = await s.call("long", "read_file", { path: "a".repeat(10_000_000) });
      assert.equal(r.result?.isError, true, JSON.stringify(r).slice(0, 400));
      const size = s.lineSizes[s.replies.indexOf(r)];
      assert.ok(size < 64 * 1024, `the reply is ${size} bytes`);
      assert.match(JSON.stringify(r), /characters cut/);
      const ping = await s.request("after", "ping");
      assert.deepEqual(ping.result, {});
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });
});

/** Start a shell call that sleeps until cancelled, and wait for its process. */
async function sleepingShell(s: RawStdio, marker: string): Promise<void> {
  await s.init();
  void s.call("sh", "local_shell", { command: "sleep", args: [marker] }); // answered cancelled, if at all
  assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 1), "the sleep started");
}

async function assertCleanEnd(s: RawStdio, state: string, marker: string): Promise<void> {
  assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 0), "the shell's child is gone");
  const [log] = policyLogs(state);
  assert.ok(log, "a policy log was written");
  const verified = await runCli(["log", "verify", "--state-dir", state, log]);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  assert.deepEqual(outcomes(log), ["interrupted"]);
}

describe("a client that closes stdin right after its requests (a script, a pipe) gets every answer", () => {
  // Sent in one write with stdin closed behind them: read before latch's MCP SDK loads and before its
  // sandbox probe ends, so they wait in the early answers (early.ts) when the end of stdin comes. The
  // shell call waits for the probe, then runs past it: only a latch that serves what was sent answers it.
  const burst = (roots: boolean) => [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: roots ? { roots: { listChanged: true } } : {},
        clientInfo: { name: "pipe", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_file", arguments: { path: "piped.txt" } } },
    { jsonrpc: "2.0", id: 4, method: "ping" },
    // Still running when the EOF is read (it comes with the rest); short, since what is served after EOF
    // has 1,000 ms and the call's box starts first (0.3 s of sleep took 1,125 ms on a loaded machine).
    {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "local_shell", arguments: { command: "sleep 0.05 && echo slept" } },
    },
  ];
  const cases = [
    { name: "plain", skills: false, roots: false },
    { name: "with a skill folder (tools/list makes a call)", skills: true, roots: false },
    // Without --root the calls wait for the client's roots; it offers them, then can no longer list them.
    { name: "without --root, from a client that offers roots it can no longer list", skills: false, roots: true },
  ];
  for (const c of cases) {
    test(`initialize, tools/list, a read, a ping and a shell call, then EOF: ${c.name}`, async () => {
      const root = path.join(fx.base, `piped-${c.skills}-${c.roots}`);
      const files: Record<string, string> = { "piped.txt": "through a pipe\n" };
      if (c.skills) files[".claude/skills/demo/SKILL.md"] = "---\nname: demo\ndescription: a demo skill\n---\nbody\n";
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        writeFileSync(path.join(root, rel), text);
      }
      const state = path.join(fx.base, `st-piped-${c.skills}-${c.roots}`);
      const args = [...(c.roots ? [] : ["--root", root]), "--state-dir", state, "--yes"];
      const s = new RawStdio(args, { LATCH_LOG: "info" }, root);
      s.child.stdin.end(
        burst(c.roots)
          .map((m) => JSON.stringify(m) + "\n")
          .join(""),
      );
      const end = await s.exited;
      assert.equal(end.code, 0, s.stderr);
      const answers = s.replies.filter((r) => "result" in r || "error" in r);
      assert.deepEqual(
        answers.map((r) => r.id).sort(),
        [1, 2, 3, 4, 5],
        `each request answered once: ${JSON.stringify(s.replies).slice(0, 600)}\n${s.stderr}`,
      );
      const read = answers.find((r) => r.id === 3)!;
      assert.match(JSON.stringify(read.result), /through a pipe/, JSON.stringify(read));
      const shell = answers.find((r) => r.id === 5)!;
      assert.match(JSON.stringify(shell.result), /slept/, JSON.stringify(shell));
      const list = answers.find((r) => r.id === 2)!;
      assert.ok(
        list.result.tools.some((t: { name: string }) => t.name === "read_file"),
        JSON.stringify(list),
      );
      assert.match(s.stderr, /the client closed stdin; no call was running; latch stopped\./, s.stderr);
      const [log] = policyLogs(state);
      assert.equal(outcomes(log).includes("interrupted"), false, readFileSync(log, "utf8"));
      const verified = await runCli(["log", "verify", "--state-dir", state, log]);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    });
  }

  test("SIGTERM while what the client sent is served ends that wait: the running call is cancelled", async () => {
    const state = path.join(fx.base, "st-eof-term");
    const s = new RawStdio(serverArgs(state), { LATCH_LOG: "info" });
    const marker = `31.4161${RUN_TAG}`;
    await sleepingShell(s, marker);
    s.child.stdin.end();
    assert.ok(await waitFor(() => /what it sent is served first/.test(s.stderr)), s.stderr);
    s.child.kill("SIGTERM");
    const end = await s.exited;
    assert.equal(end.code, 0, s.stderr);
    assert.match(s.stderr, /the client closed stdin, then SIGTERM received; 1 running call was cancelled/, s.stderr);
    await assertCleanEnd(s, state, marker);
  });
});

describe("the client goes away during a shell call", () => {
  test("EPIPE: stdout closed, then written to: the call is cancelled, its child killed, the log verifies, a line on stderr", async () => {
    const state = path.join(fx.base, "st-epipe");
    const s = new RawStdio(serverArgs(state));
    const marker = `31.4159${RUN_TAG}`;
    await sleepingShell(s, marker);
    s.child.stdout.destroy(); // the client stops reading: latch's next write gets EPIPE
    s.send({ jsonrpc: "2.0", id: "p", method: "ping" });
    const end = await s.exited;
    assert.equal(end.signal, null, `latch ended by ${end.signal}`);
    assert.equal(end.code, 1, s.stderr);
    assert.match(s.stderr, /stdout failed \(EPIPE\).*1 running call was cancelled/, s.stderr);
    await assertCleanEnd(s, state, marker);
  });

  test("stdin closed: the call is cancelled, its child killed, the log verifies", async () => {
    const state = path.join(fx.base, "st-eof");
    const s = new RawStdio(serverArgs(state));
    const marker = `31.4160${RUN_TAG}`;
    await sleepingShell(s, marker);
    s.child.stdin.end();
    const end = await s.exited;
    assert.equal(end.code, 0, s.stderr);
    assert.match(s.stderr, /closed stdin.*1 running call was cancelled/, s.stderr);
    await assertCleanEnd(s, state, marker);
  });
});
