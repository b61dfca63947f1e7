// Honest exits in the box: bwrap's init turns a death by signal into exit code 128+n, so a contained
// `sh -c 'printf partial; kill -9 $$'` came back as a normal exit 137 with its partial output shown,
// where the same call uncontained is run_tool's ESIGNAL with all output withheld. latch's own init
// (src/sandbox/init.ts) reports the program's real wait status. Each case runs contained and
// uncontained and the two results must agree; a real `exit 137` keeps its code and its output.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { pickLauncher } from "../../src/sandbox/bwrap.js";
import { waitFor } from "../helpers/wait.js";
import { makeSandboxFixture, markedProcesses, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

type Out = { status: string; code?: string; message?: string; result?: Record<string, unknown> };

let fx: SandboxFixture;
const hosts: Record<"contained" | "uncontained", Host> = {} as never;

const KILLED = "printf partial-out-k9; printf partial-err-k9 >&2; kill -9 $$";
const EXITED = "printf shown-out-137; printf shown-err-137 >&2; exit 137";

describe("a contained program's ending is reported as uncontained", () => {
  before(async () => {
    await requireSandbox();
    assert.ok(pickLauncher().perl, "perl (Debian-essential) runs latch's init in the box: `apt-get install perl-base`");
    fx = makeSandboxFixture("latch-exits-");
    for (const [name, c] of [
      ["contained", "required"],
      ["uncontained", "off"],
    ] as const) {
      hosts[name] = await fx.host({
        config: {
          toolsPolicies: { local_shell: { _containment: c }, catalog: { _tools: "sh", _containment: c } },
          agents: {},
        },
      });
    }
  });
  after(() => fx?.cleanup());

  test("run_tool: `kill -9 $$` after partial output is ESIGNAL with the output withheld, in the box as outside", async () => {
    for (const [name, host] of Object.entries(hosts)) {
      const out = (await host.call("run_tool", { tool_id: "sh", arguments: ["-c", KILLED] })) as Out;
      assert.equal(out.status, "error", `${name}: ${JSON.stringify(out)}`);
      assert.equal(out.code, "ESIGNAL", name);
      assert.match(out.message ?? "", /ended abnormally \(signal SIGKILL\); all output is withheld/, name);
      assert.ok(!JSON.stringify(out).includes("partial-"), `${name}: no byte of the output is shown`);
    }
    assert.deepEqual(markedProcesses(), []);
  });

  test("run_tool: a real `exit 137` keeps its code and its output, in the box as outside", async () => {
    for (const [name, host] of Object.entries(hosts)) {
      const out = (await host.call("run_tool", { tool_id: "sh", arguments: ["-c", EXITED] })) as Out;
      assert.equal(out.status, "ok", `${name}: ${JSON.stringify(out)}`);
      assert.equal(out.result!.exit_code, 137, name);
      assert.equal(out.result!.stdout, "shown-out-137", name);
      assert.equal(out.result!.stderr, "shown-err-137", name);
      assert.equal(out.result!.contained, name === "contained");
    }
  });

  test("local_shell: a step killed by a signal says so (sh's 137 and SIGKILL); `exit 137` has no signal", async () => {
    for (const [name, host] of Object.entries(hosts)) {
      const killed = (await host.call("local_shell", { command: `sh -c '${KILLED}'` })) as Out;
      assert.equal(killed.status, "ok", `${name}: ${JSON.stringify(killed)}`);
      assert.equal(killed.result!.exit_code, 137, name);
      const [step] = killed.result!.steps as { exit_code: number; signal?: string }[];
      assert.equal(step.signal, "SIGKILL", name);
      const exited = (await host.call("local_shell", { command: `sh -c '${EXITED}'` })) as Out;
      assert.equal(exited.result!.exit_code, 137, name);
      assert.equal(exited.result!.stdout, "shown-out-137", name);
      assert.equal((exited.result!.steps as { signal?: string }[])[0].signal, undefined, name);
    }
  });

  test("the program keeps its name, its stdin, and no descriptor of latch's init", async () => {
    const script = 'printf "%s|" "$0"; cat; ls /proc/self/fd | tr "\\n" " "';
    const seen: Record<string, unknown> = {};
    for (const [name, host] of Object.entries(hosts)) {
      const out = (await host.call("local_shell", { command: `sh -c '${script}' my-name`, stdin: "fed-in" })) as Out;
      assert.equal(out.status, "ok", JSON.stringify(out));
      seen[name] = out.result!.stdout;
    }
    // The same descriptors as outside (what the test runner itself leaks to children included): fd 4,
    // the init's status pipe, is not among them.
    assert.match(String(seen.contained), /^my-name\|fed-in0 1 2 /);
    assert.ok(!String(seen.contained).split(" ").includes("4"), String(seen.contained));
    assert.equal(seen.contained, seen.uncontained);
  });

  // bwrap, the process latch spawns, died of the SIGTERM meant for the program, and its
  // --die-with-parent then SIGKILLed the whole box: a server's shutdown handler never ran.
  test("process_kill: a program that traps SIGTERM gets its grace in the box as outside (its trap runs, its exit is its own)", async () => {
    for (const [name, host] of Object.entries(hosts)) {
      const done = path.join(fx.root, `${name}-trapped.txt`);
      const ready = path.join(fx.root, `${name}-ready.txt`);
      writeFileSync(
        path.join(fx.root, `${name}-trap.sh`),
        `trap 'sleep 0.3; echo flushed > ${name}-trapped.txt; exit 0' TERM\necho > ${name}-ready.txt\nwhile :; do sleep 0.05; done\n`,
      );
      const started = (await host.call("local_shell", { command: `bash ${name}-trap.sh`, background: true })) as Out;
      assert.equal(started.status, "ok", `${name}: ${JSON.stringify(started)}`);
      assert.ok(await waitFor(() => existsSync(ready)), `${name}: the program set its trap`);
      const killed = (await host.call("process_kill", { id: started.result!.id })) as Out;
      assert.equal(killed.status, "ok", `${name}: ${JSON.stringify(killed)}`);
      assert.equal(killed.result!.exit_code, 0, `${name}: ${JSON.stringify(killed.result)}`);
      assert.equal(readFileSync(done, "utf8"), "flushed\n", name);
    }
    assert.deepEqual(markedProcesses(), []);
  });

  // A stop that came while the box was starting went to bwrap alone (which died of it, while its pid 1
  // cannot have it) or to the init before it had forked the program: the program ran on until SIGKILL,
  // the 2 s grace later. A kill at once after the start fell in that gap about every other time here.
  test("process_kill at once after the start: SIGTERM reaches the program in the box as outside, not SIGKILL 2 s on", async () => {
    for (const [name, host] of Object.entries(hosts)) {
      for (let i = 0; i < 8; i++) {
        const started = (await host.call("local_shell", { command: "sleep 30", background: true })) as Out;
        assert.equal(started.status, "ok", `${name}: ${JSON.stringify(started)}`);
        const since = Date.now();
        const killed = (await host.call("process_kill", { id: started.result!.id })) as Out;
        const took = Date.now() - since;
        assert.equal(killed.status, "ok", `${name}: ${JSON.stringify(killed)}`);
        assert.ok(took < 2000, `${name}, kill ${i + 1}: ended after ${took} ms, by SIGKILL at the grace's end`);
      }
    }
    assert.deepEqual(markedProcesses(), []);
  });

  test("a program that ignores SIGTERM in the box is still stopped at the timeout, and nothing of it is left", async () => {
    const out = (await hosts.contained.call("local_shell", {
      command: `sh -c 'trap "" TERM; printf started; sleep 30'`,
      timeout_ms: 500,
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.timed_out, true);
    assert.deepEqual(markedProcesses(), []);
  });
});
