// Background processes (local_shell `background: true`) go the one way a foreground call does: planned
// and refused under a shell policy, decided and logged before they start, and run inside the sandbox.
// What one tries while it runs (write outside the workspace, write .git/hooks, read ~/.ssh) fails
// inside; afterwards the disk, the process table and the policy log are checked.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { waitFor } from "../helpers/wait.js";
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SECRETS,
  type SandboxFixture,
} from "./sandbox-fixture.js";

type Out = { status: string; reason?: string; result?: Record<string, any> };

let fx: SandboxFixture;

function escapes(fx: SandboxFixture): string {
  const tryIt = (label: string, fn: string) =>
    `try { ${fn}; console.log("${label}: DONE") } catch (e) { console.log("${label}: failed", e.code) }`;
  return [
    `const fs = require("fs");`,
    tryIt("write-outside", `fs.writeFileSync(${JSON.stringify(path.join(fx.outside, "bg"))}, "x")`),
    tryIt("write-hooks", `fs.writeFileSync(".git/hooks/pre-push", "#!/bin/sh\\n")`),
    // The name built at run time: a script whose text names a credential path is refused as an argument.
    tryIt("read-ssh", `console.log(fs.readFileSync(${JSON.stringify(fx.home)} + "/.s" + "sh/id_" + "rsa", "utf8"))`),
    `console.log("ready"); setInterval(() => {}, 1000);`,
  ].join("\n");
}

describe("background processes, contained", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-sbx-bg-");
    initRepo(fx);
  });
  after(() => fx?.cleanup());

  test("a background process's escapes fail inside the sandbox; kill leaves no process", async () => {
    const host: Host = await fx.host();
    const out = (await host.call(
      "local_shell",
      { command: "node", args: ["-e", escapes(fx)], background: true },
      { session: "bg" },
    )) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.contained, true);
    assert.equal(out.result!.mode, "workspace-write");
    const id = String(out.result!.id);
    const read = async () =>
      ((await host.call("process_output", { id }, { session: "bg" })) as Out).result!.stdout.text as string;
    assert.ok(await waitFor(async () => (await read()).includes("ready")), await read());
    const stdout = await read();
    for (const what of ["write-outside", "write-hooks", "read-ssh"])
      assert.match(stdout, new RegExp(`${what}: failed`), stdout);
    assert.ok(!stdout.includes(SECRETS.ssh));
    assert.ok(markedProcesses().length > 0, "it runs, carrying the run mark");
    assert.equal(((await host.call("process_kill", { id }, { session: "bg" })) as Out).status, "ok");
    assert.deepEqual(markedProcesses(), []);
    assert.equal(existsSync(path.join(fx.outside, "bg")), false);
    assert.equal(existsSync(path.join(fx.root, ".git/hooks/pre-push")), false);
    const d = decisions(host).find((r) => r.tool === "local_shell" && r.session === "bg")!;
    assert.equal(d.final, "allow");
    assert.deepEqual(d.sandbox, { contained: true, mode: "workspace-write", network: false });
  });

  test("under a shell policy a background call is planned and refused like a foreground one", async () => {
    const host: Host = await fx.host({
      config: { toolsPolicies: { local_shell: { _allowed_commands: "ls" } }, agents: {} },
    });
    const before = decisions(host).length;
    for (const command of ["rm -rf .git", "ls && touch made-in-background", "sh -c 'touch made-in-background'"]) {
      const out = (await host.call("local_shell", { command, background: true }, { session: "pol" })) as Out;
      assert.equal(out.status, "refused", `${command}: ${JSON.stringify(out)}`);
    }
    const list = (await host.call("process_list", {}, { session: "pol" })) as Out;
    assert.deepEqual(list.result!.processes, []);
    assert.deepEqual(markedProcesses(), []);
    assert.equal(existsSync(path.join(fx.root, "made-in-background")), false);
    assert.equal(existsSync(path.join(fx.root, ".git/HEAD")), true);
    const logged = decisions(host)
      .slice(before)
      .filter((r) => r.tool === "local_shell");
    assert.deepEqual(
      logged.map((r) => [r.tool, r.final]),
      [
        ["local_shell", "deny"],
        ["local_shell", "deny"],
        ["local_shell", "deny"],
      ],
    );
  });
});
