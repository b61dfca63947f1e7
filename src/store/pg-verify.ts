// `latch log verify --state postgres://…`: every run's copy in the store, checked as a log file is
// (verifyLog: the chain, sequence numbers, every record's hash, the record shapes), against its kept
// head, and against every signed checkpoint: a checkpoint's signature must verify under a trusted key,
// and the store's line at the checkpoint's count must carry the checkpoint's hash. One UPDATE of a
// stored record fails at that record; a table re-chained by its owner (every hash recomputed) passes
// the chain and fails the checkpoint, which its owner cannot sign.
import { canonicalJson } from "../audit/canonical-json.js";
import { verifyLog } from "../audit/log-verify.js";
import { signatureOk, type SignedCheckpoint } from "./checkpoint.js";
import type { PgStore } from "./pg.js";

interface FleetRunReport {
  run_id: string;
  host: string;
  workspace: string;
  file: string;
  records: number;
  /** The run has not finished (still running, or it stopped without run_finished): its chain is checked to its head. */
  open: boolean;
  checkpoints: number;
  ok: boolean;
  fault?: { line?: number; message: string };
}

export interface FleetReport {
  ok: boolean;
  runs: FleetRunReport[];
  /** Checkpoints that fail on their own (a bad signature, an untrusted key, a run the store lacks). */
  checkpointFaults: { run_id: string; lines: number; message: string }[];
}

interface RunRow extends Record<string, unknown> {
  run_id: string;
  host: string;
  workspace: string;
  file: string;
  head: string;
  lines: number;
}

/**
 * Check every run in the store. `checkpoints`: the exported ones (files beside each instance's key)
 * and the store's own; `trusted`: the public keys whose signatures count (base64 SPKI).
 */
export async function verifyFleet(
  store: PgStore,
  exported: SignedCheckpoint[],
  trusted: ReadonlySet<string>,
): Promise<FleetReport> {
  const runs = await store.query<RunRow>(
    "SELECT run_id, host, workspace, file, head, lines FROM runs ORDER BY started_at, run_id",
  );
  const inStore = (
    await store.query<{ body: string; public_key: string; signature: string }>(
      "SELECT body, public_key, signature FROM checkpoints ORDER BY id",
    )
  ).map((r) => ({ ...(JSON.parse(r.body) as SignedCheckpoint), public_key: r.public_key, signature: r.signature }));
  const checkpointFaults: FleetReport["checkpointFaults"] = [];
  const byRun = new Map<string, SignedCheckpoint[]>();
  const seen = new Set<string>();
  for (const cp of [...exported, ...inStore]) {
    const key = canonicalJson(cp);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!signatureOk(cp)) {
      checkpointFaults.push({
        run_id: cp.run_id,
        lines: cp.lines,
        message: "its signature does not verify (the checkpoint was changed)",
      });
      continue;
    }
    if (!trusted.has(cp.public_key)) {
      checkpointFaults.push({
        run_id: cp.run_id,
        lines: cp.lines,
        message: "it is signed by a key verify does not trust (pass the signer's checkpoints file, or --trust-key)",
      });
      continue;
    }
    byRun.set(cp.run_id, [...(byRun.get(cp.run_id) ?? []), cp]);
  }
  const known = new Set(runs.map((r) => r.run_id));
  for (const [runId, cps] of byRun)
    if (!known.has(runId))
      checkpointFaults.push({
        run_id: runId,
        lines: cps[0].lines,
        message: "a signed checkpoint names this run, and the store has no such run (it was deleted)",
      });
  const reports: FleetRunReport[] = [];
  for (const run of runs) reports.push(await verifyRun(store, run, byRun.get(run.run_id) ?? []));
  return { ok: checkpointFaults.length === 0 && reports.every((r) => r.ok), runs: reports, checkpointFaults };
}

async function verifyRun(store: PgStore, run: RunRow, cps: SignedCheckpoint[]): Promise<FleetRunReport> {
  const rows = await store.query<{ sequence: number; previous_sha256: string; record: string; record_sha256: string }>(
    "SELECT sequence, previous_sha256, record, record_sha256 FROM log_records WHERE run_id = $1 ORDER BY sequence",
    [run.run_id],
  );
  // The lines as the log file has them, so the one checker reads both.
  const text = rows
    .map(
      (r) =>
        `{"sequence":${r.sequence},"previous_sha256":${JSON.stringify(r.previous_sha256)},"record":${r.record},"record_sha256":${JSON.stringify(r.record_sha256)}}\n`,
    )
    .join("");
  const v = verifyLog(text);
  const open = !v.finished && v.fault?.line === rows.length + 1;
  const base = {
    run_id: run.run_id,
    host: run.host,
    workspace: run.workspace,
    file: run.file,
    records: rows.length,
    open,
    checkpoints: cps.length,
  };
  if (!v.ok && !open) return { ...base, ok: false, fault: v.fault };
  if (run.lines !== rows.length || run.head !== v.head)
    return {
      ...base,
      ok: false,
      fault: {
        message: `the run's kept head (${run.lines} lines, ${run.head}) is not its last record (${rows.length} lines, ${v.head}): records were added or removed`,
      },
    };
  for (const cp of [...cps].sort((a, b) => a.lines - b.lines)) {
    const at = rows[cp.lines - 1];
    if (!at)
      return {
        ...base,
        ok: false,
        fault: {
          line: cp.lines,
          message: `a checkpoint signed at ${cp.at} covers ${cp.lines} lines; the store holds ${rows.length}: records were removed`,
        },
      };
    if (at.record_sha256 !== cp.head)
      return {
        ...base,
        ok: false,
        fault: {
          line: cp.lines,
          message: `the checkpoint signed at ${cp.at} says line ${cp.lines} hashes to ${cp.head}; the store's line ${cp.lines} hashes to ${at.record_sha256}: the table was rewritten and re-chained`,
        },
      };
  }
  return { ...base, ok: true };
}
