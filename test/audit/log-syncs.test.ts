// The policy log's syncs on the thread pool (src/audit/log.ts), real fdatasyncs held by the fault shim
// (test/helpers/fault-shim.ts). The kernel tells a writeback error to one fdatasync of a file only, so
// a sync's answer waits for the syncs that ran beside it (one of them may hold its error), and
// settled() for those under way when it is asked; neither waits for a sync started after (reads'
// syncs streaming while a write waits would hold it as long as they stream).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { buildFaultShim } from "../helpers/fault-shim.js";
import { makeFixture } from "../helpers/fixture.js";

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "../helpers/log-syncs.ts");
const fx = makeFixture("latch-log-syncs-");
after(() => fx.cleanup());
const shim = buildFaultShim();
after(() => shim.cleanup());

test("settled() answers with the syncs under way when asked, not with one started after; a sync waits for those beside it", () => {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", SCRIPT, path.join(fx.base, "policy-syncs.jsonl"), fx.base],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        LD_PRELOAD: shim.lib,
        LATCH_FAULT: "fdatasync:policy-*:0:GATE",
        LATCH_FAULT_MARK: path.join(fx.base, "mark"),
        LATCH_FAULT_GATE: path.join(fx.base, "gate"),
      },
    },
  );
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
  assert.equal(out.settledWhileSecondHeld, true, "settled() waited for a sync started after it was asked");
  assert.equal(out.firstWhileSecondHeld, false, "the first sync answered before the one beside it");
  assert.equal(out.syncs, 3, "both pool syncs and run_finished's counted");
});
