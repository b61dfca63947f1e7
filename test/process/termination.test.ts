// How a run is stopped (src/process/termination.ts): a cancel gives SIGTERM its grace before SIGKILL,
// and an abort whose reason is KillAtOnce (a sandbox that lost a mount: review g21, where a process
// that ignored SIGTERM wrote on through the grace) is SIGKILL at once, also when a grace already runs.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KillAtOnce, Termination } from "../../src/process/termination.js";

function stopped(abort: (c: AbortController) => void): string[] {
  const sent: string[] = [];
  const ctl = new AbortController();
  const t = new Termination({ kill: (sig) => sent.push(sig), graceMs: 60_000, signal: ctl.signal });
  abort(ctl);
  t.dispose();
  return sent;
}

test("a cancel is SIGTERM first, SIGKILL only after the grace", () => {
  assert.deepEqual(
    stopped((c) => c.abort()),
    ["SIGTERM"],
  );
});

test("an abort for KillAtOnce is SIGKILL at once, with no SIGTERM before it", () => {
  assert.deepEqual(
    stopped((c) => c.abort(new KillAtOnce("its sandbox lost a mount"))),
    ["SIGKILL"],
  );
});

test("KillAtOnce during a SIGTERM's grace sends SIGKILL then, not when the grace ends", () => {
  const sent: string[] = [];
  const ctl = new AbortController();
  const t = new Termination({ kill: (sig) => sent.push(sig), graceMs: 60_000, signal: ctl.signal });
  t.stop("limit");
  assert.deepEqual(sent, ["SIGTERM"]);
  ctl.abort(new KillAtOnce("its sandbox lost a mount"));
  assert.deepEqual(sent, ["SIGTERM", "SIGKILL"]);
  t.dispose();
});
