// Saying what happened, through the built CLI: `latch explain` prints contained and the mode, and
// `latch mcp` says on stderr at start-up whether the processes it starts run contained.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { initRepo, makeSandboxFixture, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

let fx: SandboxFixture;
before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-sbx-report-");
  initRepo(fx);
});
after(() => fx?.cleanup());

const env = () => ({ HOME: fx.home, LATCH_STATE_DIR: fx.state, LATCH_CONFIG: "", XDG_CONFIG_HOME: "" });

test("latch explain states contained: true and the mode a call would run in", async () => {
  const ro = await runCli(["explain", "--root", fx.root, "local_shell", '{"command":"git status"}'], { env: env() });
  assert.equal(ro.code, 0, ro.stderr);
  assert.deepEqual(ro.json.sandbox, { contained: true, mode: "read-only", network: false });
  const rw = await runCli(["explain", "--root", fx.root, "local_shell", '{"command":"npm test"}'], { env: env() });
  assert.deepEqual(rw.json.sandbox, { contained: true, mode: "workspace-write", network: false });
  const read = await runCli(["explain", "--root", fx.root, "read_file", '{"path":"a.txt"}'], { env: env() });
  assert.equal(read.json.sandbox, null, "a tool that starts no process has no sandbox line");
});

test("latch mcp's start-up line on stderr says contained: true, the modes and the network", async () => {
  // stdin closed at once: the server starts, prints its line, and ends.
  const r = await runCli(["mcp", "--root", fx.root], { env: env(), input: "" });
  assert.match(
    r.stderr,
    /latch mcp: local_shell: contained: true, mode read-only for the read-only tier and workspace-write otherwise, network denied; run_tool: contained: true/,
  );
  assert.match(r.stderr, /bubblewrap \(\/.*bwrap\)/);
});
