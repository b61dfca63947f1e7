// Two processes × 200 interleaved edit_file calls on one file, each through `latch call`, each
// session reading before its edit. Every edit is either applied or refused as stale; none is lost.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const ROUNDS = 200;

test("two processes editing one file never lose an update", async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  fx.write({ "shared.txt": "END\n" });
  const base = ["--root", fx.root, "--state-dir", fx.state];

  const worker = async (name: string) => {
    const applied: string[] = [];
    const stale: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const read = await runCli([
        "call",
        "read_file",
        JSON.stringify({ path: "shared.txt", force: true }),
        ...base,
        "--session",
        name,
      ]);
      assert.equal(read.json?.status, "ok", read.stdout + read.stderr);
      const mark = `${name}-${i}`;
      const edit = await runCli([
        "call",
        "edit_file",
        JSON.stringify({ path: "shared.txt", old_string: "END\n", new_string: `${mark}\nEND\n` }),
        ...base,
        "--session",
        name,
      ]);
      if (edit.json?.status === "ok") {
        assert.equal(edit.code, 0);
        applied.push(mark);
      } else {
        assert.equal(edit.json?.status, "refused", `neither applied nor refused: ${edit.stdout}${edit.stderr}`);
        assert.match(edit.json.reason, /changed since you read it/);
        assert.equal(edit.code, 3);
        stale.push(mark);
      }
    }
    return { applied, stale };
  };

  const [a, b] = await Promise.all([worker("A"), worker("B")]);
  const lines = readFileSync(path.join(fx.root, "shared.txt"), "utf8")
    .split("\n")
    .filter((l) => l !== "");
  assert.equal(lines[lines.length - 1], "END");
  const inFile = lines.slice(0, -1);
  assert.equal(new Set(inFile).size, inFile.length, "no edit applied twice");
  assert.deepEqual([...inFile].sort(), [...a.applied, ...b.applied].sort(), "the file holds exactly the applied edits");
  for (const mark of [...a.stale, ...b.stale]) assert.ok(!inFile.includes(mark), `a refused edit landed: ${mark}`);
  assert.equal(a.applied.length + a.stale.length + b.applied.length + b.stale.length, 2 * ROUNDS);
  // Each worker's own edits keep their order: a lost update would show as a gap or a swap.
  for (const w of [a, b])
    assert.deepEqual(
      inFile.filter((l) => w.applied.includes(l)),
      w.applied,
    );
  console.log(`# applied ${a.applied.length + b.applied.length}, refused as stale ${a.stale.length + b.stale.length}`);
});
