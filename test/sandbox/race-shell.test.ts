// Issue 26 by the real attack path: the racer is latch's own `local_shell` background process, run
// contained under the built-in auto_edit envelope, swapping a workspace folder with a link to a folder
// outside while the model's read_file and write_file calls go through the same host. The sandbox lets
// it make the link (the link is inside the workspace); the file tools must not follow it.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { expectOk } from "../helpers/expect.js";
import { waitFor } from "../helpers/wait.js";
import { forMs, makeOutside, RACE_MS, snapshot, swapper, Tally, tempFiles, type Outside } from "../fs/race-fixture.js";
import {
  decisions,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  type SandboxFixture,
} from "./sandbox-fixture.js";

let fx: SandboxFixture;
let outside: Outside;

before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-sbx-race-");
  outside = makeOutside(path.join(fx.base, "away"));
  fx.write("d/credentials", "inside\n");
});
after(() => fx?.cleanup());

test("a contained background process swapping a folder for a link cannot steer read_file or write_file outside", async (t) => {
  const host: Host = await fx.host();
  const start = await host.call(
    "local_shell",
    { command: "node", args: ["-e", swapper(outside.dir)], background: true },
    { session: "attacker" },
  );
  const started = expectOk(start).result;
  assert.equal(started.contained, true, "the racer runs in the sandbox");
  const d = decisions(host).find((r) => r.tool === "local_shell" && r.session === "attacker")!;
  assert.equal(d.final, "allow", "auto_edit lets it run without a question");
  const id = String(started.id);
  const stdout = async () =>
    String(
      (expectOk(await host.call("process_output", { id }, { session: "attacker" })).result.stdout as { text: string })
        .text,
    );
  assert.ok(await waitFor(async () => (await stdout()).includes("ready")), await stdout());

  const beforeTree = snapshot(outside.dir);
  const tally = new Tally();
  const call = async (tool: string, args: object): Promise<CallResult> => tally.add(await host.call(tool, args));
  const steps = await forMs(
    RACE_MS,
    async (i) => {
      await call("read_file", { path: "d/credentials", force: true });
      await call("write_file", { path: `d/w-${i}.txt`, content: "MODEL-BYTES\n" });
      await call("create_directory", { path: `d/m-${i}/n` });
    },
    () => tally.other > 0,
  );
  expectOk(await host.call("process_kill", { id }, { session: "attacker" }));
  t.diagnostic(`${steps} steps:\n${tally.summary()}`);

  tally.assertNoMarker(outside.marker);
  assert.deepEqual(snapshot(outside.dir), beforeTree, "nothing was created or changed outside");
  assert.deepEqual(tempFiles(fx.base), [], "no temp file left");
  assert.ok(tally.other > 0, "the racer reached the calls");
  assert.deepEqual(markedProcesses(), [], "the racer is gone");
});
