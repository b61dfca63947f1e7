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

async function scopeOf(command: string): Promise<string[] | undefined> {
  const h = await fx.host();
  try {
    const ex = await h.explain("local_shell", { command });
    assert.ok(ex.effect?.shell, `${command}: planned (${ex.reason})`);
    return describeRisk("local_shell", ex.effect, h.root).scope?.keys;
  } finally {
    h.close();
  }
}

/** Whether a session grant given for `given` lets `later` pass unasked (as the MCP transport checks it). */
async function covers(given: string, later: string): Promise<boolean> {
  const granted = new Set(await scopeOf(given));
  const keys = await scopeOf(later);
  return keys !== undefined && keys.every((k) => granted.has(k));
}

test("a session grant for `git --no-pager log` does not cover `git -c core.pager=evil log`", async () => {
  assert.equal(await covers("git --no-pager log", "git -c core.pager=evil log"), false);
  assert.equal(await covers("git --no-pager log", "git --exec-path=. log"), false);
  assert.equal(await covers("git --no-pager log", "git --git-dir=elsewhere log"), false);
  assert.equal(await covers("git --no-pager log", "git -C sub log"), false);
  assert.equal(await covers("git --no-pager log", "git --no-pager status"), false);
  assert.equal(await covers("git log", "git -c core.pager=evil log"), false);
  // The same program, options and subcommand still pass: the grant is for a kind of command, not one line.
  assert.equal(await covers("git --no-pager log", "git --no-pager log -n 3"), true);
  assert.equal(await covers("npm test", "npm test -- --watch"), true);
});

test("a command that runs code latch cannot read is granted for its exact line only", async () => {
  assert.equal(await covers("node -e 1", 'node -e \'require("fs").rmSync("x")\''), false);
  assert.equal(await covers("node -e 1", "node -e 1"), true);
});
