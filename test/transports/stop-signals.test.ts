// Signals during the clean stop. A wrapper that sends SIGTERM twice (Codex at exit) or a double Ctrl-C
// used to kill latch before run_finished was written (the handlers were `process.once`). Now every
// signal after the first is ignored while the stop runs, and three Ctrl-C within 2 s close the log at
// once. Each case ends with `latch log verify` and a look at the log's last record.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { httpClient, startHttpServer } from "../helpers/mcp.js";
import { policyLogs, processesRunning, RawStdio, RUN_TAG } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());
/** Runs per transport: 20 with LATCH_STRESS=1 (the count), 3 in the everyday suite. */
const RUNS = process.env.LATCH_STRESS === "1" ? 20 : 3;

async function assertClosedLog(state: string): Promise<void> {
  const [log] = policyLogs(state);
  assert.ok(log, "a policy log was written");
  const v = await runCli(["log", "verify", "--state-dir", state, log]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  const lines = readFileSync(log, "utf8").trim().split("\n");
  const last = JSON.parse(lines.at(-1)!) as { record: { type: string } };
  assert.equal(last.record.type, "run_finished", "the log's last record is run_finished");
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("two SIGTERMs 0–20 ms apart after calls: run_finished is written and the log verifies", () => {
  test(`stdio, ${RUNS} runs`, async () => {
    for (let i = 0; i < RUNS; i++) {
      const state = path.join(fx.base, `stdio-${i}`);
      const s = new RawStdio(["--root", fx.root, "--state-dir", state]);
      await s.init();
      const r = await s.call(1, "list_dir", { path: "." });
      assert.ok(r.result, JSON.stringify(r));
      s.child.kill("SIGTERM");
      await pause((i * 7) % 21);
      s.child.kill("SIGTERM");
      const end = await s.exited;
      assert.equal(end.signal, null, `run ${i}: latch was killed by a signal: ${s.stderr}`);
      assert.equal(end.code, 0, s.stderr);
      await assertClosedLog(state);
    }
  });

  test(`HTTP, ${RUNS} runs`, async () => {
    for (let i = 0; i < RUNS; i++) {
      const state = path.join(fx.base, `http-${i}`);
      const server = await startHttpServer(["--root", fx.root, "--state-dir", state]);
      const client = await httpClient(server);
      await client.callTool({ name: "list_dir", arguments: { path: "." } });
      const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
        server.child.once("exit", (code, signal) => r({ code, signal })),
      );
      server.child.kill("SIGTERM");
      await pause((i * 7) % 21);
      server.child.kill("SIGTERM");
      const end = await exited;
      assert.equal(end.signal, null, `run ${i}: latch was killed by a signal: ${server.stderr()}`);
      assert.equal(end.code, 0, server.stderr());
      await assertClosedLog(state);
    }
  });
});

test("three Ctrl-C within 2 s during a running call: latch exits at once, the call logged as interrupted", async () => {
  const state = path.join(fx.base, "force");
  // A child that ignores SIGTERM keeps the clean stop busy for the 2 s grace before SIGKILL; uncontained,
  // since bubblewrap would end on the SIGTERM and take its pid namespace with it.
  const config = path.join(fx.base, "force.toml");
  writeFileSync(config, '[tools_policies.local_shell]\n_containment = "off"\n');
  const s = new RawStdio(["--root", fx.root, "--state-dir", state, "--config", config, "--yes"]);
  await s.init();
  const ready = path.join(fx.root, `stop-signals-ready-${RUN_TAG}`);
  const script = `process.on("SIGTERM", () => {}); require("fs").writeFileSync(${JSON.stringify(ready)}, ""); setInterval(() => {}, 1000);`;
  void s.call("sh", "local_shell", { command: "node", args: ["-e", script] });
  assert.ok(await waitFor(() => existsSync(ready)), "the child started and ignores SIGTERM");
  // Signals of one kind do not queue: a pending SIGINT absorbs another, so they go 100 ms apart.
  for (let i = 0; i < 3; i++) {
    s.child.kill("SIGINT");
    await pause(100);
  }
  const end = await s.exited;
  assert.equal(end.code, 130, s.stderr);
  assert.match(s.stderr, /SIGINT received 3 times; latch stopped at once/);
  await assertClosedLog(state);
  const records = readFileSync(policyLogs(state)[0], "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { record: { type: string; status?: string } }).record);
  assert.ok(
    records.some((r) => r.type === "effect_outcome" && r.status === "interrupted"),
    "the shell call's outcome is logged",
  );
  assert.ok(await waitFor(() => processesRunning(`node -e ${script}`).length === 0), "the child did not outlive latch");
});
