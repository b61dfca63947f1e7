// write_file killed with SIGKILL at random moments, 100 times: the file always holds the whole old or
// the whole new content, never a mix; temp files of dead writers are cleaned by the next write.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";

const LOOP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/write-loop.mjs");
const KILLS = 100;
const LINES = 16384; // 2 MiB per content: a write takes long enough to be cut in the middle

function killedWriter(root: string, state: string, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOOP, root, state, "f.txt", "a", "b"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRITE_LINES: String(LINES) } });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.once("data", () => setTimeout(() => child.kill("SIGKILL"), delayMs));
    child.on("exit", (code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`writer ended by itself (${code}): ${err}`))));
  });
}

test("SIGKILL during write_file never leaves a torn file", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  const whole = (ch: string) => `${ch.repeat(127)}\n`.repeat(LINES);
  fx.write({ "f.txt": whole("a") });
  const seen = new Set<string>();
  for (let i = 0; i < KILLS; i++) {
    await killedWriter(fx.root, fx.state, Math.floor(Math.random() * 400));
    const now = readFileSync(path.join(fx.root, "f.txt"), "utf8");
    const which = now === whole("a") ? "a" : now === whole("b") ? "b" : undefined;
    assert.ok(which, `round ${i}: torn file of ${now.length} bytes`);
    seen.add(which);
  }
  assert.equal(seen.size, 2, "the kills landed both before and after some writes completed");
  // Dead writers' temp files are removed by the next write to the same file.
  const { createHost } = await import("../../src/host/create-host.js");
  const host = await createHost({ root: fx.root, stateDir: fx.state, config: { toolsPolicies: {}, agents: {} } });
  const line = readFileSync(path.join(fx.root, "f.txt"), "utf8").slice(0, 128);
  assert.equal((await host.call("read_file_range", { path: "f.txt", start_line: 1, end_line: 1 }, { session: "after" })).status, "ok");
  const edit = await host.call("edit_file", { path: "f.txt", old_string: line, new_string: "x\n", replace_all: true }, { session: "after" });
  assert.equal(edit.status, "ok", JSON.stringify(edit));
  host.close();
  assert.equal(readFileSync(path.join(fx.root, "f.txt"), "utf8"), "x\n".repeat(LINES));
  assert.deepEqual(readdirSync(fx.root), ["f.txt"]);
});
