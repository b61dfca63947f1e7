// Retention runs in every latch that starts or closes, so two of them prune one logs folder at once:
// a log listed by one can be unlinked by the other at any moment. Seen in a full `npm test`
// (test/cli/log-runs, four latches at once): a call failed with ECONFIG "cannot prune … (ENOENT …)",
// because the check whether a log is still written opened it and then took its size by name.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pruneRunLogs, RUN_LOG } from "../../src/audit/log-files.js";
import { stressCount } from "../helpers/stress.js";

const PRUNES = stressCount(3000, 30000, "LATCH_RETENTION_RACES");

test("another run's retention unlinking a log between its open and its size does not fail this run's", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "latch-retention-race-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Logs of this (live) process without run_finished: retention must look inside each, so it opens
  // them; the other "run" below makes and unlinks them as fast as it can.
  const names = Array.from({ length: 4 }, (_, i) => `policy-2026-12-06T00-00-0${i}-000Z-${process.pid}-abc${i}.jsonl`);
  for (const n of names) assert.match(n, RUN_LOG);
  const other = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("node:fs"), path = require("node:path");
       const [dir, ...names] = process.argv.slice(1);
       process.stdout.write("ready\\n");
       for (;;) for (const n of names) {
         const f = path.join(dir, n);
         try { fs.writeFileSync(f, '{"type":"call"}\\n'); fs.unlinkSync(f); } catch {}
       }`,
      dir,
      ...names,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  t.after(() => other.kill("SIGKILL"));
  await new Promise((r) => other.stdout.once("data", r));
  const keep = path.join(dir, "policy-2026-12-06T00-00-09-000Z-1-fff.jsonl");
  let prunes = 0;
  while (prunes < PRUNES) {
    // Each log listed is one this (live) pid still writes, unless it went meanwhile: the look races.
    pruneRunLogs(dir, { maxFiles: 1 }, keep);
    prunes++;
    if (prunes % 200 === 0) await new Promise((r) => setImmediate(r)); // let the other side be scheduled
  }
  assert.equal(other.exitCode, null, "the other run was still unlinking logs throughout");
  other.kill("SIGKILL");
  for (const n of readdirSync(dir)) assert.ok(names.includes(n), `only the other run's logs are there: ${n}`);
});
