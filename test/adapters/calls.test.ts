// A tool set's kept calls are bounded: a long agent run whose SDK never runs or never reads back its
// calls does not make latch grow without limit. The oldest are dropped first, and a dropped approval
// only means the person is asked again (a fresh prepare), never a run without one.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { KEPT, LatchCalls } from "../../src/adapters/calls.js";
import { EDIT, scene, type Scene } from "./scene.js";

const scenes: Scene[] = [];
after(() => scenes.forEach((s) => s.fx.cleanup()));

test("attack: approvals prepared and never run keep at most KEPT; the oldest is asked again", async () => {
  const s = await scene("latch-calls-bound-");
  scenes.push(s);
  const calls = new LatchCalls(s.host, {}, "a test");
  await s.host.call("read_file", { path: "notes.txt" }, { session: calls.session });
  for (let i = 0; i < KEPT + 5; i++) assert.equal(await calls.needsApproval(`c${i}`, "edit_file", EDIT), true);
  assert.equal(calls.pending("c0"), undefined, "the oldest approval was dropped");
  assert.equal(calls.pending("c4"), undefined);
  assert.ok(calls.pending("c5"), "the newest KEPT are kept");
  assert.ok(calls.pending(`c${KEPT + 4}`));
  // Run the dropped call: no approval is bound to it, so latch asks (no approver here: refused), nothing written.
  const r = await calls.run("c0", "edit_file", EDIT);
  assert.notEqual(r.status, "ok", JSON.stringify(r));
  assert.equal(s.disk(), "one\ntwo\nthree\n");
});

test("denials kept are bounded too, and a dropped one is prepared anew", async () => {
  const s = await scene("latch-calls-denied-");
  scenes.push(s);
  const calls = new LatchCalls(s.host, {}, "a test");
  for (let i = 0; i < KEPT + 1; i++) assert.equal((await calls.deny(`d${i}`)).status, "refused");
  await s.host.call("read_file", { path: "notes.txt" }, { session: calls.session });
  // d1 is still remembered as denied: asked again, it needs approval without a new prepare.
  assert.equal(await calls.needsApproval("d1", "edit_file", EDIT), true);
  assert.equal(calls.pending("d1"), undefined);
  // d0 was dropped: it is prepared anew, so the person sees the diff again.
  assert.equal(await calls.needsApproval("d0", "edit_file", EDIT), true);
  assert.match(calls.pending("d0")!.diff!, /-two\n\+TWO/);
});
