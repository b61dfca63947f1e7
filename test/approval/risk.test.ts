// The risks an approval request names come from the planner's program tables (the facts the envelope
// and the sandbox use), not from a second list of network programs and read-only prefixes.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { describeRisk } from "../../src/approval/risk.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

async function risksOf(command: string): Promise<string[]> {
  const h = await fx.host();
  try {
    const ex = await h.explain("local_shell", { command });
    assert.ok(ex.effect?.shell, `${command}: planned (${ex.reason})`);
    return describeRisk("local_shell", ex.effect, h.root).risk;
  } finally {
    h.close();
  }
}

test("git with an option before its subcommand still names the network", async () => {
  assert.ok((await risksOf("git -C . fetch origin")).includes("network"));
  assert.ok((await risksOf("git fetch origin")).includes("network"));
});

test("a program the tables know only reads is not said to write files; one that writes is", async () => {
  assert.deepEqual(await risksOf("grep -n foo a.txt"), []);
  assert.deepEqual(await risksOf("sort -o out.txt a.txt"), ["may write files"]);
  assert.deepEqual(await risksOf("rm -rf victim"), ["may write files", "deletes recursively"]);
});

test("a program in no table is taken to write and to reach the network", async () => {
  fx.write({ "a.txt": "x\n" });
  assert.deepEqual(await risksOf("some-unknown-program a.txt"), ["may write files", "network"]);
});
