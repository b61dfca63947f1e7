// Shutdown leaves no traces. SIGTERM during a shell call and during a streamed 300 MB edit: the
// calls are cancelled and logged as interrupted (the log verifies), no process, temp file or lock
// folder is left. SIGKILL of `latch mcp` leaves what it had (an uncontained shell child, a temp
// file, a lock): the next start removes all of it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { closeSync, createReadStream, mkdirSync, openSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { outcomes, policyLogs, processesRunning, RawStdio, RUN_TAG } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
after(() => fx.cleanup());

const MIB = 1 << 20;
/** A 300 MB file whose only `NEEDLE-<tag>` is in its last line. */
function bigFile(rel: string, tag: string): string {
  const abs = path.join(fx.root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  const fd = openSync(abs, "w");
  const block = Buffer.from("filler line of text, nothing to see here .......................\n".repeat(MIB / 64));
  for (let i = 0; i < 300; i++) writeSync(fd, block);
  writeSync(fd, `NEEDLE-${tag}\n`);
  closeSync(fd);
  return abs;
}

function sha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")))
      .on("error", reject);
  });
}

const temps = (dir: string) => readdirSync(dir).filter((n) => /\.latch-\d+-[0-9a-f]{12}\.tmp$/.test(n));
const locks = (state: string) => readdirSync(path.join(state, "locks")).filter((n) => n.endsWith(".lock"));

/** Read the file (read-before-write), then start the streamed edit; resolves once its temp file exists. */
async function editUnderway(s: RawStdio, dir: string, rel: string, tag: string): Promise<void> {
  const read = await s.call("read", "read_file_range", { path: rel, start_line: 1, end_line: 2 });
  assert.equal(read.result?.isError, undefined, JSON.stringify(read).slice(0, 400));
  void s.call("edit", "edit_file", { path: rel, old_string: `NEEDLE-${tag}`, new_string: `CHANGED-${tag}` });
  assert.ok(await waitFor(() => temps(dir).length === 1, 60_000), "the streamed edit began writing its temp file");
}

async function verifies(state: string): Promise<string[]> {
  const [log] = policyLogs(state);
  assert.ok(log, "a policy log was written");
  const v = await runCli(["log", "verify", "--state-dir", state, log]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  return outcomes(log);
}

describe("SIGTERM", () => {
  test("mid-shell: the child is killed, the call logged as interrupted, the log verifies", async () => {
    const state = path.join(fx.base, "st-term-shell");
    const s = new RawStdio(["--root", fx.root, "--state-dir", state, "--yes"]);
    const marker = `41.4142${RUN_TAG}`;
    await s.init();
    void s.call("sh", "local_shell", { command: "sleep", args: [marker] });
    assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 1), "the sleep started");
    s.child.kill("SIGTERM");
    const end = await s.exited;
    assert.equal(end.code, 0, s.stderr);
    assert.match(s.stderr, /SIGTERM received; 1 running call was cancelled/);
    assert.deepEqual(processesRunning(`sleep ${marker}`), []);
    assert.deepEqual(await verifies(state), ["interrupted"]);
  });

  test("mid-streamed 300 MB edit: no temp file, no lock folder, the file unchanged, the log verifies", async () => {
    const state = path.join(fx.base, "st-term-edit");
    const dir = path.join(fx.root, "term-edit");
    const abs = bigFile("term-edit/big.txt", "term");
    const before = await sha256(abs);
    const s = new RawStdio(["--root", fx.root, "--state-dir", state, "--yes"]);
    await s.init();
    await editUnderway(s, dir, "term-edit/big.txt", "term");
    s.child.kill("SIGTERM");
    const end = await s.exited;
    assert.equal(end.code, 0, s.stderr);
    assert.deepEqual(temps(dir), []);
    assert.deepEqual(locks(state), []);
    assert.equal(await sha256(abs), before);
    assert.deepEqual(await verifies(state), ["ok", "interrupted"]);
  });
});

describe("SIGKILL, then the next start", () => {
  test("an uncontained shell child, a temp file and a lock left by a killed latch are removed at the next start", async () => {
    const state = path.join(fx.base, "st-kill");
    const config = path.join(fx.base, "uncontained.toml");
    // Uncontained: a contained child dies with latch (bwrap --die-with-parent); this one outlives it.
    writeFileSync(config, '[tools_policies.local_shell]\n_containment = "off"\n');
    const dir = path.join(fx.root, "kill-edit");
    const abs = bigFile("kill-edit/big.txt", "kill");
    const before = await sha256(abs);
    const args = ["--root", fx.root, "--state-dir", state, "--config", config, "--yes"];
    const s = new RawStdio(args);
    const marker = `42.7182${RUN_TAG}`;
    await s.init();
    void s.call("sh", "local_shell", { command: "sleep", args: [marker] });
    assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 1), "the sleep started");
    await editUnderway(s, dir, "kill-edit/big.txt", "kill");
    s.child.kill("SIGKILL");
    await s.exited;
    // What the killed run left, which the next start must remove.
    assert.equal(processesRunning(`sleep ${marker}`).length, 1, "the uncontained child outlived latch");
    assert.equal(temps(dir).length, 1);
    assert.equal(locks(state).length, 1);
    assert.equal(await sha256(abs), before, "the killed edit never reached the file");

    const next = new RawStdio(args);
    try {
      await next.init();
      assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 0), "the orphan was killed");
      assert.deepEqual(temps(dir), []);
      assert.deepEqual(locks(state), []);
      assert.match(next.stderr, /removed 1 leftover process\(es\), 1 temp file\(s\) and 1 lock\(s\)/);
      // And the edit the killed run did not finish goes through now.
      const read = await next.call("read", "read_file_range", {
        path: "kill-edit/big.txt",
        start_line: 1,
        end_line: 1,
      });
      assert.equal(read.result?.isError, undefined);
      const edit = await next.call("edit", "edit_file", {
        path: "kill-edit/big.txt",
        old_string: "NEEDLE-kill",
        new_string: "CHANGED-kill",
      });
      assert.equal(edit.result?.isError, undefined, JSON.stringify(edit).slice(0, 400));
    } finally {
      next.child.stdin.end();
      await next.exited;
    }
  });

  test("contained (the default): after SIGKILL and a restart no child is left either", async () => {
    const state = path.join(fx.base, "st-kill-contained");
    const s = new RawStdio(["--root", fx.root, "--state-dir", state, "--yes"]);
    const marker = `43.1415${RUN_TAG}`;
    await s.init();
    void s.call("sh", "local_shell", { command: "sleep", args: [marker] });
    assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 1), "the sleep started");
    s.child.kill("SIGKILL");
    await s.exited;
    const next = new RawStdio(["--root", fx.root, "--state-dir", state, "--yes"]);
    try {
      await next.init();
      assert.ok(await waitFor(() => processesRunning(`sleep ${marker}`).length === 0), "no child is left");
    } finally {
      next.child.stdin.end();
      await next.exited;
    }
  });
});
