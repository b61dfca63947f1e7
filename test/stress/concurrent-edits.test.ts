// Two processes, each a host of its own over one workspace and state dir (as two `latch mcp` servers
// are), make interleaved read-then-edit cycles on one file: every edit is either applied or refused as
// stale, none is lost, none lands twice, and each process's edits keep their order. 200 cycles each in
// `npm test`, 2,000 under LATCH_STRESS=1. The processes are started once (test/helpers/edit-worker.mjs)
// rather than once per call: `latch call` per call (800 cold starts) made this the suite's slowest
// file, and a cold start proves nothing here that test/cli/call.test.ts does not (a refused stale edit
// through the CLI, exit code 3).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { stressCount } from "../helpers/stress.js";

const WORKER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/edit-worker.mjs");
const ROUNDS = stressCount(200, 2000);

interface Edit {
  mark: string;
  status: string;
  reason?: string;
}

/** Starts an editor; `go()` lets it begin, `done` resolves with its edits once it exits cleanly. */
function editor(root: string, state: string, name: string) {
  const child = spawn(process.execPath, [WORKER, root, state, "shared.txt", name, String(ROUNDS)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const loaded = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (out.startsWith("loaded\n")) resolve();
    });
    child.once("exit", () => reject(new Error(`editor ${name} ended while loading: ${err}`)));
  });
  const done = new Promise<Edit[]>((resolve, reject) => {
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`editor ${name} exited ${code}: ${err}`));
      resolve(
        out
          .split("\n")
          .slice(1)
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as Edit),
      );
    });
  });
  done.catch(() => undefined); // read after go()
  return { loaded, go: () => child.stdin.end("go\n"), done };
}

test("two processes editing one file never lose an update", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "shared.txt": "END\n" });
  const editors = [editor(fx.root, fx.state, "A"), editor(fx.root, fx.state, "B")];
  await Promise.all(editors.map((e) => e.loaded));
  for (const e of editors) e.go();
  const results = await Promise.all(editors.map((e) => e.done));

  const split = results.map((edits) => {
    const applied: string[] = [];
    const stale: string[] = [];
    for (const e of edits) {
      if (e.status === "ok") applied.push(e.mark);
      else {
        assert.equal(e.status, "refused", `neither applied nor refused: ${JSON.stringify(e)}`);
        assert.match(e.reason ?? "", /changed since you read it/);
        stale.push(e.mark);
      }
    }
    assert.equal(edits.length, ROUNDS, "every cycle reported");
    return { applied, stale };
  });
  const lines = readFileSync(path.join(fx.root, "shared.txt"), "utf8")
    .split("\n")
    .filter((l) => l !== "");
  assert.equal(lines[lines.length - 1], "END");
  const inFile = lines.slice(0, -1);
  const applied = split.flatMap((w) => w.applied);
  const stale = split.flatMap((w) => w.stale);
  assert.equal(new Set(inFile).size, inFile.length, "no edit applied twice");
  assert.deepEqual([...inFile].sort(), [...applied].sort(), "the file holds exactly the applied edits");
  for (const mark of stale) assert.ok(!inFile.includes(mark), `a refused edit landed: ${mark}`);
  // Each process's own edits keep their order: a lost update would show as a gap or a swap.
  for (const w of split)
    assert.deepEqual(
      inFile.filter((l) => w.applied.includes(l)),
      w.applied,
    );
  // The race was run: some edit found the file changed by the other process since its read.
  assert.ok(stale.length > 0, `the two processes' cycles never interleaved (${applied.length} applied)`);
  console.log(`# applied ${applied.length}, refused as stale ${stale.length}`);
});
