// Background processes end with their session through the built `latch mcp`, not only in-process:
// a stdio client that closes (latch's stdin ends) leaves neither latch nor any process it started, run
// contained (bubblewrap) or not; over HTTP a session's DELETE and its idle expiry each end that
// session's processes, while the server and the other sessions go on. Processes are found in /proc by
// the run mark latch puts in each child's environment (LATCH_RUN=<latch pid>-…, src/process/procs.ts)
// and by a sleep duration unique to this test process.
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { probeContainment } from "../../src/sandbox/probe.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, httpClient, rawPost, rawSession, startHttpServer, type ToolResult } from "../helpers/mcp.js";
import { ended, livingProcesses, markedBy, type Proc } from "../helpers/procs.js";
import { RUN_TAG } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
const UNCONTAINED = path.join(fx.base, "uncontained.toml");
writeFileSync(UNCONTAINED, '[tools_policies.local_shell]\n_containment = "off"\n');

/** Sleep durations (seconds, about a month) that only this test process's children run. */
const marker = (n: number) => `3${n}${RUN_TAG}`;
const MARKERS = [1, 2, 3, 4, 5].map(marker);

/** Living (not zombie) processes started by the latch whose pid is `latch`: their environment carries its run mark. */
const startedBy = markedBy;

/** For a failure message: each process's pid and the end of its command line. */
const shown = (procs: Proc[]) => procs.map((p) => `${p.pid} …${p.argv.join(" ").slice(-60)}`).join("; ");

/** The sleep itself, and (contained) the bubblewrap processes whose command line runs it. */
const holding = (procs: Proc[], m: string) => procs.filter((p) => p.argv.includes(m));
const sleeping = (procs: Proc[], m: string) => procs.filter((p) => p.argv.join(" ") === `sleep ${m}`);

/** Every process of this test's sleeps, wherever it came from: a failed test must not leave them running. */
after(() => {
  for (const p of livingProcesses())
    if (p.argv[0] === "sleep" && MARKERS.includes(p.argv[1])) process.kill(p.pid, "SIGKILL");
  fx.cleanup();
});

async function startSleep(client: Client, m: string): Promise<Record<string, any>> {
  const r = (await client.callTool({
    name: "local_shell",
    arguments: { command: "sleep", args: [m], background: true },
  })) as ToolResult;
  assert.equal(r.isError, undefined, JSON.stringify(r));
  const fields = fieldsOf(r);
  assert.match(String(fields.id), /^bg\d+$/, JSON.stringify(r));
  return fields;
}

async function stillRunning(client: Client, id: string): Promise<boolean> {
  const r = (await client.callTool({ name: "process_output", arguments: { id } })) as ToolResult;
  assert.equal(r.isError, undefined, JSON.stringify(r));
  return fieldsOf(r).running === true;
}

describe("stdio: the client closes (latch's stdin ends)", () => {
  const systemPath = (process.env.PATH ?? "").split(":").filter((d) => path.isAbsolute(d));
  const cases = [
    { what: "contained (bubblewrap, when it works here)", config: [] as string[], m: marker(1) },
    // Uncontained there is no --die-with-parent: only latch itself (the session's end, then its exit's
    // sweep of marked processes) can stop this sleep.
    { what: "uncontained (_containment = off)", config: ["--config", UNCONTAINED], m: marker(2) },
  ];
  for (const c of cases)
    test(`${c.what}: latch exits and no process it started remains`, async () => {
      const state = path.join(fx.base, `st-stdio-${c.m}`);
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp", "--root", fx.root, "--state-dir", state, "--yes", ...c.config],
        env: { ...process.env, LATCH_LOG: "info" },
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr!.on("data", (d) => (stderr += d));
      const client = new Client({ name: "latch-test", version: "1.0.0" });
      await client.connect(transport);
      const latch = transport.pid!;
      let closed = false;
      try {
        const started = await startSleep(client, c.m);
        const contained = c.config.length === 0 ? (await probeContainment(systemPath)).available : false;
        assert.equal(started.contained, contained, JSON.stringify(started));
        assert.ok(await waitFor(() => sleeping(startedBy(latch), c.m).length === 1), "the sleep runs, marked by latch");
        assert.equal(await stillRunning(client, started.id), true);
        if (contained)
          assert.ok(
            holding(startedBy(latch), c.m).some((p) => p.argv[0].endsWith("bwrap")),
            "it runs under bubblewrap",
          );

        await client.close(); // ends latch's stdin; SIGTERM only if latch has not exited 2 s later
        closed = true;
        assert.ok(await waitFor(() => ended(latch), 10_000), `latch exited (${shown(startedBy(latch))} left)`);
        assert.match(stderr, /the client closed stdin; no call was running; latch stopped\./, stderr);
        assert.doesNotMatch(stderr, /SIGTERM/, "latch stopped on its own, not because the client signalled it");
        assert.ok(
          await waitFor(() => startedBy(latch).length === 0, 5_000),
          `no process of latch's remains: ${shown(startedBy(latch))}`,
        );
        assert.deepEqual(readdirSync(path.join(state, "runs")), [], "latch removed its run record");
      } finally {
        if (!closed) await client.close();
      }
    });
});

describe("HTTP: a session's end ends its background processes", () => {
  test("DELETE (terminateSession): its process is gone; the server and another session go on", async () => {
    const s = await startHttpServer(
      ["--root", fx.root, "--state-dir", path.join(fx.base, "st-delete"), "--yes"],
      undefined,
      { LATCH_LOG: "info" },
    );
    try {
      const latch = s.child.pid!;
      const a = await httpClient(s);
      const b = await httpClient(s);
      const [ma, mb] = [marker(3), marker(4)];
      await startSleep(a, ma);
      const kept = await startSleep(b, mb);
      assert.ok(
        await waitFor(() => sleeping(startedBy(latch), ma).length + sleeping(startedBy(latch), mb).length === 2),
        "both sleeps run",
      );

      await (a.transport as StreamableHTTPClientTransport).terminateSession();
      await a.close();
      assert.ok(
        await waitFor(() => holding(startedBy(latch), ma).length === 0, 10_000),
        `the deleted session's process is gone: ${shown(holding(startedBy(latch), ma))}`,
      );
      assert.match(s.stderr(), /HTTP session \S+ closed: the client sent DELETE/, s.stderr());

      assert.equal(s.child.exitCode, null, "the server still runs");
      assert.equal(sleeping(startedBy(latch), mb).length, 1, "the other session's process still runs");
      assert.equal(await stillRunning(b, kept.id), true);
      const list = (await b.callTool({ name: "process_list", arguments: {} })) as ToolResult;
      assert.deepEqual(
        fieldsOf(list).processes.map((p: any) => [p.id, p.running]),
        [[kept.id, true]],
        JSON.stringify(list),
      );
      const killed = (await b.callTool({ name: "process_kill", arguments: { id: kept.id } })) as ToolResult;
      assert.equal(killed.isError, undefined, JSON.stringify(killed));
      assert.deepEqual(startedBy(latch), [], "process_kill left nothing either");
      await b.close();
    } finally {
      await s.stop();
    }
  });

  test("idle expiry (--session-idle 3): the idle session's process is gone; the server goes on", async () => {
    const s = await startHttpServer(
      ["--root", fx.root, "--state-dir", path.join(fx.base, "st-idle"), "--yes", "--session-idle", "3"],
      undefined,
      { LATCH_LOG: "info" },
    );
    try {
      const latch = s.child.pid!;
      // A raw session: an SDK client holds a GET stream open, and a session with an open request is never idle.
      const sid = await rawSession(s.url, s.token);
      const m = marker(5);
      const call = await rawPost(
        s.url,
        s.token,
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "local_shell", arguments: { command: "sleep", args: [m], background: true } },
        },
        sid,
      );
      assert.equal(call.status, 200);
      const body = await call.text();
      const reply = JSON.parse(/^data: (.*)$/m.exec(body)?.[1] ?? body) as { result: ToolResult };
      assert.equal(reply.result.isError, undefined, body);
      assert.match(String(fieldsOf(reply.result).id), /^bg\d+$/, body);
      assert.ok(await waitFor(() => sleeping(startedBy(latch), m).length === 1), "the sleep runs");

      // No request from here on: the server closes the session on its own (3 s, swept every 0.75 s).
      assert.ok(
        await waitFor(() => s.stderr().includes(`HTTP session ${sid} closed: idle`)),
        `the session expired: ${s.stderr()}`,
      );
      assert.ok(
        await waitFor(() => holding(startedBy(latch), m).length === 0, 10_000),
        `the expired session's process is gone: ${shown(holding(startedBy(latch), m))}`,
      );
      assert.equal(s.child.exitCode, null, "the server still runs");
      const gone = await rawPost(s.url, s.token, { jsonrpc: "2.0", id: 3, method: "tools/list" }, sid);
      assert.equal(gone.status, 404);
      await gone.text();
      const c = await httpClient(s);
      assert.deepEqual(
        fieldsOf((await c.callTool({ name: "process_list", arguments: {} })) as ToolResult).processes,
        [],
      );
      await c.close();
    } finally {
      await s.stop();
    }
  });
});
