// The fleet on PostgreSQL (issue 35), against the local SQLite store as the peer, in one run:
// 1. Approval wake-up: a waiting call's queue approver, answered from another connection; the time
//    from sending the answer to the waiting call having it, over N approvals: PostgreSQL (LISTEN/
//    NOTIFY carries the id, the row is read again) against SQLite (the waiter polls data_version).
// 2. Load: I `latch mcp` processes over stdio, each making D write_file calls (every decision synced
//    to the log and, with --state, committed to PostgreSQL before the write runs), all at once, with
//    pgbench running against the same server beside them; then against the SQLite store alone. Reports
//    decisions/s and p50/p99 per decision, and checks 0 lost records: every run's lines in the store
//    match its log file, line for line, and `latch log verify --state` passes every chain.
// Usage: npm run build && node --import tsx bench/fleet.ts [--approvals 500] [--instances 20] [--decisions 200] [--no-write]
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { queueApprover, sha256Hex } from "../src/approval/queue.js";
import { PgStore } from "../src/store/pg.js";
import { sqliteStore } from "../src/store/sqlite.js";
import type { StateStore } from "../src/store/types.js";
import { startPostgres, type PgServer } from "../test/helpers/postgres.js";
import { measuredLine, noiseNote, percentile, publish, REPO, thisTree, watchLoad } from "./report.js";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const APPROVALS = arg("approvals", 500);
const INSTANCES = arg("instances", 20);
const DECISIONS = arg("decisions", 200);
const CLI = path.join(REPO, "dist/cli/main.js");

/** Answer-commit to waiter-has-it, ms, for each of `n` approvals on `waiter` answered through `answerer`. */
async function wakeups(waiter: StateStore, answerer: StateStore, n: number): Promise<number[]> {
  const out: number[] = [];
  const diff = "+a line\n";
  for (let i = 0; i < n; i++) {
    let queued!: (id: string) => void;
    const gotId = new Promise<string>((resolve) => (queued = resolve));
    const asked = queueApprover(waiter.approvals, { workspace: "/bench" }, queued).request(
      { id: "", tool: "write_file", args: { path: "a" }, session: "bench", reason: "bench", diff, timeoutMs: 60_000 },
      new AbortController().signal,
    );
    const id = await gotId;
    await new Promise((r) => setTimeout(r, 5)); // the waiter has read its row once and now waits
    // From before the answer is sent: its own round trip is counted too (the waiter may hear the NOTIFY first).
    const answeredAt = performance.now();
    const ok = await answerer.approvals.answer(id, { approved: true, scope: "once", shownSha256: sha256Hex(diff) });
    if (!ok) throw new Error("the answer did not land");
    const a = await asked;
    if (!a.approved) throw new Error(`not approved: ${a.reason}`);
    out.push(performance.now() - answeredAt);
  }
  return out;
}

interface LoadRow {
  store: string;
  decisionsPerS: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  lost: number;
  verify: string;
}

async function load(pg: PgServer | undefined, base: string): Promise<LoadRow> {
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const clients: { client: Client; state: string; root: string }[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const root = path.join(base, `ws-${i}`);
    const state = path.join(base, `state-${i}`);
    mkdirSync(root, { recursive: true });
    const client = new Client({ name: "bench", version: "1" }, { capabilities: {} });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          CLI,
          "mcp",
          "--root",
          root,
          "--state-dir",
          state,
          "--envelope",
          "auto_edit",
          ...(pg ? ["--state", pg.url] : []),
        ],
        env: { ...process.env } as Record<string, string>,
        stderr: "ignore",
      }),
    );
    clients.push({ client, state, root });
  }
  const t0 = performance.now();
  await Promise.all(
    clients.map(async ({ client }, i) => {
      for (let d = 0; d < DECISIONS; d++) {
        const s = performance.now();
        const r = (await client.callTool({
          name: "write_file",
          arguments: { path: `f${d % 10}.txt`, content: `instance ${i} decision ${d}\n` },
        })) as { isError?: boolean; content?: unknown };
        lat.push(performance.now() - s);
        if (r.isError) {
          errors++;
          firstError ??= JSON.stringify(r).slice(0, 300);
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  for (const { client } of clients) await client.close();
  let lost = 0;
  let verify = "n/a (the log files and their heads in latch.db)";
  if (pg) {
    await new Promise((r) => setTimeout(r, 1000)); // the processes' last flush on exit
    for (const { state } of clients) {
      const dir = path.join(state, "logs");
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        const local = readFileSync(file, "utf8")
          .trimEnd()
          .split("\n")
          .map((line) => {
            const l = JSON.parse(line) as { sequence: number; record_sha256: string };
            return `${l.sequence} ${l.record_sha256}`;
          });
        const stored = new Set(
          pg
            .psql(
              `SELECT sequence || ' ' || record_sha256 FROM log_records JOIN runs USING (run_id) WHERE runs.file = '${file}'`,
            )
            .trim()
            .split("\n"),
        );
        lost += local.filter((l) => !stored.has(l)).length;
      }
    }
    const v = spawnSync(
      process.execPath,
      [
        CLI,
        "log",
        "verify",
        "--state",
        pg.url,
        "--state-dir",
        clients[0].state,
        ...clients.flatMap((c) => ["--checkpoints", path.join(c.state, "checkpoints.jsonl")]),
      ],
      { encoding: "utf8" },
    );
    verify = v.status === 0 ? (v.stdout.trim().split("\n").at(-1) ?? "") : `FAILED: ${v.stdout.slice(-500)}`;
  }
  return {
    store: pg ? "PostgreSQL (--state), pgbench beside" : "SQLite (the state dir)",
    decisionsPerS: (INSTANCES * DECISIONS) / secs,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    errors,
    ...(firstError ? { firstError } : {}),
    lost,
    verify,
  };
}

async function main(): Promise<void> {
  const watch = watchLoad();
  const pg = await startPostgres();
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-fleet-"));
  try {
    // 1. wake-up latency
    const a = await PgStore.open(pg.url, path.join(base, "a"));
    const b = await PgStore.open(pg.url, path.join(base, "b"));
    const pgLat = await wakeups(a, b, APPROVALS);
    await a.close();
    await b.close();
    const db = path.join(base, "latch.db");
    const sa = sqliteStore(db);
    const sb = sqliteStore(db);
    const sqLat = await wakeups(sa, sb, APPROVALS);
    await sa.close();
    await sb.close();
    // 2. load, with pgbench beside on the PostgreSQL run
    const pgbench = "/usr/lib/postgresql/15/bin/pgbench";
    const conn = ["-h", "127.0.0.1", "-p", String(pg.port), "-U", "latch", "latch"];
    spawnSync(pgbench, ["-i", "-q", "-s", "5", ...conn], { stdio: "ignore" });
    const beside = spawn(pgbench, ["-c", "4", "-j", "2", "-T", "3600", ...conn], { stdio: ["ignore", "pipe", "pipe"] });
    const pgRow = await load(pg, path.join(base, "pg"));
    beside.kill("SIGINT");
    const sqRow = await load(undefined, path.join(base, "sqlite"));
    watch.stop();
    const cmd = `node --import tsx bench/fleet.ts --approvals ${APPROVALS} --instances ${INSTANCES} --decisions ${DECISIONS}`;
    const body = [
      measuredLine(cmd, watch, `, PostgreSQL 15 (a test server: initdb, fsync off, loopback TCP), at ${thisTree()}`),
      noiseNote(watch),
      "",
      `**Approval wake-up** (${APPROVALS} approvals, one at a time): the time from sending an answer (another connection's conditional UPDATE, its round trip included) to the waiting call's queue approver resolving with it.`,
      "",
      "| store | how the waiter wakes | p50 ms | p99 ms | max ms |",
      "|---|---|---:|---:|---:|",
      `| PostgreSQL | LISTEN/NOTIFY of the id, then the row read | ${percentile(pgLat, 50).toFixed(2)} | ${percentile(pgLat, 99).toFixed(2)} | ${Math.max(...pgLat).toFixed(2)} |`,
      `| SQLite (peer) | data_version polled every 25 ms, then the row read | ${percentile(sqLat, 50).toFixed(2)} | ${percentile(sqLat, 99).toFixed(2)} | ${Math.max(...sqLat).toFixed(2)} |`,
      "",
      `**Load**: ${INSTANCES} \`latch mcp\` processes over stdio at once, ${DECISIONS} write_file calls each (${INSTANCES * DECISIONS} decisions, each synced to the log file and, on PostgreSQL, committed there before the write runs), the envelope auto_edit; on the PostgreSQL run \`pgbench -c 4 -j 2\` (scale 5) runs against the same server the whole time. Lost: local log lines (every run's) missing from the store, by sequence and hash.`,
      "",
      "| store | decisions/s | p50 ms | p99 ms | errors | lost records | latch log verify --state |",
      "|---|---:|---:|---:|---:|---:|---|",
      ...[pgRow, sqRow].map(
        (r) =>
          `| ${r.store} | ${r.decisionsPerS.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${r.store.startsWith("SQLite") ? "n/a" : r.lost} | ${r.verify} |`,
      ),
      `| PostgreSQL ÷ SQLite | ${(pgRow.decisionsPerS / sqRow.decisionsPerS).toFixed(2)} (higher is better) | ${(pgRow.p50 / sqRow.p50).toFixed(2)} | ${(pgRow.p99 / sqRow.p99).toFixed(2)} | | | |`,
      ...[pgRow, sqRow].flatMap((r) =>
        r.firstError
          ? [`\nThe first error of the ${r.store} run, as the client got it: \`${r.firstError.replace(/`/g, "'")}\``]
          : [],
      ),
    ].join("\n");
    publish("fleet", "Fleet on PostgreSQL: approval wake-up and 20 instances under load (bench/fleet.ts)", body);
  } finally {
    pg.destroy();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
