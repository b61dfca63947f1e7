// The PostgreSQL state store against a real server (test/helpers/postgres.ts): racing answers, the
// queue across instances, tampering with the stored log (one UPDATE; the whole table re-chained), and
// PostgreSQL killed while calls wait.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { sha256Hex, shownText } from "../../src/approval/queue.js";
import { lineHash, type LogLine } from "../../src/audit/log.js";
import { canonicalJson } from "../../src/audit/canonical-json.js";
import { PgStore } from "../../src/store/pg.js";
import type { QueuedApproval } from "../../src/store/types.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { startPostgres, type PgServer } from "../helpers/postgres.js";
import { waitFor } from "../helpers/wait.js";

const PAIRS = Number(process.env.LATCH_FLEET_PAIRS ?? (process.env.LATCH_STRESS === "1" ? 1000 : 40));

let pg: PgServer;
let fx: Fixture;
before(async () => {
  pg = await startPostgres();
  fx = makeFixture("latch-pg-");
});
after(() => {
  fx.cleanup();
  pg.destroy();
});

/** The request of `session` once another instance lists it (PostgreSQL may still be coming back). */
async function listed(store: PgStore, session: string): Promise<QueuedApproval> {
  let item: QueuedApproval | undefined;
  const found = await waitFor(async () => {
    try {
      item = (await store.approvals.list()).find((q) => q.session === session);
    } catch {
      return false; // not back yet
    }
    return item !== undefined;
  });
  if (!found || !item) throw new Error(`no request of session ${session} was listed within 20 s`);
  return item;
}

const NEW = {
  tool: "write_file",
  session: "s1",
  reason: "writes need approval",
  args: { path: "a.txt", content: "x" },
  timeoutMs: 60_000,
  host: "box-a",
  workspace: "/w/a",
};

describe("the approval queue on PostgreSQL", () => {
  test(`approve and deny racing from two instances, ${PAIRS} times: exactly one answer wins each`, async () => {
    const a = await PgStore.open(pg.url, fx.state);
    const b = await PgStore.open(pg.url, fx.state);
    try {
      let approvedWins = 0;
      for (let i = 0; i < PAIRS; i++) {
        const shown = sha256Hex(shownText({ diff: `diff ${i}`, args: {} }));
        const id = await a.approvals.add({ ...NEW, diff: `diff ${i}`, shownSha256: shown });
        const approve = () => a.approvals.answer(id, { approved: true, scope: "once", shownSha256: shown });
        const deny = () => b.approvals.answer(id, { approved: false, scope: "once", shownSha256: shown });
        // Which query leaves first takes turns: a store that let the first one win by order alone, or
        // that favoured one answer, would show in the count below either way.
        const [yes, no] =
          i % 2 === 0 ? await Promise.all([approve(), deny()]) : (await Promise.all([deny(), approve()])).reverse();
        assert.equal(Number(yes) + Number(no), 1, `pair ${i}: one answer wins, not ${Number(yes) + Number(no)}`);
        const row = await b.approvals.answerOf(id);
        assert.equal(row?.state, yes ? "approved" : "denied", "the stored answer is the winner's");
        if (yes) approvedWins++;
        await a.approvals.remove(id);
      }
      assert.ok(
        approvedWins > 0 && approvedWins < PAIRS,
        `both answers won sometimes (approve won ${approvedWins} of ${PAIRS})`,
      );
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("an answer naming other bytes than the request shows is refused, and the request still waits", async () => {
    const a = await PgStore.open(pg.url, fx.state);
    try {
      const shown = sha256Hex("+the diff the person saw\n");
      const id = await a.approvals.add({ ...NEW, diff: "+the diff the person saw\n", shownSha256: shown });
      assert.equal(
        await a.approvals.answer(id, { approved: true, scope: "once", shownSha256: sha256Hex("+another diff\n") }),
        false,
      );
      assert.equal((await a.approvals.answerOf(id))?.state, "pending");
      assert.equal(
        await a.approvals.answer(id, { approved: true, scope: "session", shownSha256: shown }),
        false,
        "no session scope was offered",
      );
      assert.equal(await a.approvals.answer(id, { approved: true, scope: "once", shownSha256: shown }), true);
      assert.equal(
        await a.approvals.answer(id, { approved: false, scope: "once", shownSha256: shown }),
        false,
        "stale",
      );
      await a.approvals.remove(id);
    } finally {
      await a.close();
    }
  });

  test("another instance's request is listed with its host, workspace and session, and its call runs once answered there", async () => {
    const host = await fx.host({ envelope: "default", stateUrl: pg.url, approver: undefined });
    const { queueApprover } = await import("../../src/approval/queue.js");
    const other = await PgStore.open(pg.url, fx.state);
    try {
      const call = host.call(
        "write_file",
        { path: "fleet.txt", content: "from the fleet\n" },
        { approver: queueApprover(host.store.approvals, { workspace: host.workspace }), session: "sess-7" },
      );
      const item = await listed(other, "sess-7");
      assert.equal(item.workspace, host.workspace);
      assert.equal(typeof item.host, "string");
      assert.ok(
        await other.approvals.answer(item.id, {
          approved: true,
          scope: "once",
          shownSha256: sha256Hex(shownText(item)),
        }),
      );
      const out = await call;
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.equal(readFileSync(path.join(fx.root, "fleet.txt"), "utf8"), "from the fleet\n");
    } finally {
      await other.close();
      await host.shutdown("test over");
    }
  });
});

describe("the policy log's copy and signed checkpoints", () => {
  let runId = "";
  test("a run's every line is in PostgreSQL with the same hashes; verify passes", async () => {
    const host = await fx.host({ envelope: "auto_edit", stateUrl: pg.url });
    for (let i = 0; i < 5; i++) await host.call("write_file", { path: `c${i}.txt`, content: `${i}\n` });
    await host.call("read_file", { path: "c1.txt" });
    const file = host.policyLog;
    await host.shutdown("test over");
    const local = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const [run] = pg.psql(`SELECT run_id FROM runs WHERE file = '${file}'`).trim().split("\n");
    runId = run;
    const stored = pg
      .psql(`SELECT record_sha256 FROM log_records WHERE run_id = '${runId}' ORDER BY sequence`)
      .trim()
      .split("\n");
    assert.deepEqual(
      stored,
      local.map((l: { record_sha256: string }) => l.record_sha256),
      "every line, in order, same hashes",
    );
    assert.ok(existsSync(path.join(fx.state, "checkpoints.jsonl")), "checkpoints exported beside the key");
    const v = await runCli(["log", "verify", "--state", pg.url, "--state-dir", fx.state]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.match(v.stdout, new RegExp(`run ${runId} .*: ok: ${local.length} records`));
  });

  test("one UPDATE of a stored record: verify fails at that record", async () => {
    pg.psql(
      `UPDATE log_records SET record = replace(record, '"reason":"', '"reason":"(forged) ') WHERE run_id = '${runId}' AND sequence = 4`,
    );
    const v = await runCli(["log", "verify", "--state", pg.url, "--state-dir", fx.state]);
    assert.equal(v.code, 1);
    assert.match(v.stdout, new RegExp(`run ${runId} .* record 4: record_sha256 does not match`));
  });

  test("the whole table re-chained by the database owner: the signed checkpoint mismatch catches it", async () => {
    // The owner recomputes every hash from line 4 on, so the chain is whole again, and fixes the head.
    const rows = pg
      .psql(`SELECT sequence, record FROM log_records WHERE run_id = '${runId}' ORDER BY sequence`)
      .trim()
      .split("\n")
      .map((l) => {
        const bar = l.indexOf("|");
        return { seq: Number(l.slice(0, bar)), record: l.slice(bar + 1) };
      });
    let prev = "0".repeat(64);
    const sql: string[] = [];
    for (const r of rows) {
      const hash = lineHash(r.seq, prev, JSON.parse(r.record));
      assert.equal(canonicalJson(JSON.parse(r.record)), r.record);
      sql.push(
        `UPDATE log_records SET previous_sha256 = '${prev}', record_sha256 = '${hash}' WHERE run_id = '${runId}' AND sequence = ${r.seq};`,
      );
      prev = hash;
    }
    sql.push(`UPDATE runs SET head = '${prev}' WHERE run_id = '${runId}';`);
    pg.psql(sql.join("\n"));
    const v = await runCli(["log", "verify", "--state", pg.url, "--state-dir", fx.state]);
    assert.equal(v.code, 1, v.stdout);
    // The first signed checkpoint past the rewrite catches it: which line that is depends on when the
    // checkpoints were signed (a timer), so any line from the rewrite's first on.
    const caught = new RegExp(
      `run ${runId} .* record (\\d+): the checkpoint signed at .* the table was rewritten and re-chained`,
    ).exec(v.stdout);
    assert.ok(caught, v.stdout);
    const line = Number(caught[1]);
    assert.ok(line >= 4 && line <= rows.length, `caught at line ${line} of ${rows.length}`);
  });
});

describe("the log's copy while its checkpoint is being stored", () => {
  // A line appended while the copy stores a checkpoint used to wait for a later line to wake the copy
  // again: the run's last lines (an outcome, run_finished) were left out of PostgreSQL, and shutdown
  // waited 5 s for them in vain (CI, 2026-12-04: "effect 1 was allowed but has no outcome").
  test("a line appended during the checkpoint's INSERT is committed without another line after it", async () => {
    const store = await PgStore.open(pg.url, fx.state);
    try {
      const copy = store.mirrorRun({ file: path.join(fx.state, "stranded.jsonl"), workspace: fx.root });
      const line = (sequence: number): LogLine => ({
        sequence,
        previous_sha256: "0".repeat(64),
        record: { type: "servers_approved", server: "s", tools: [], removed: [], at: new Date().toISOString() },
        record_sha256: String(sequence).repeat(64).slice(0, 64),
      });
      copy.append(line(1));
      // Resolved from the commit's loop, which goes on to the run's first checkpoint and waits for its
      // INSERT: this line comes while it does.
      await copy.flushed(5000);
      copy.append(line(2));
      await copy.flushed(3000);
      const n = pg.psql(`SELECT count(*) FROM log_records WHERE run_id = '${copy.runId}'`).trim();
      assert.equal(n, "2");
      await copy.close();
    } finally {
      await store.close();
    }
  });
});

describe("PostgreSQL killed while calls wait", () => {
  test("kill -9: a waiting call is refused with the reason within its wait; after restart, a pending request is served", async () => {
    const { queueApprover } = await import("../../src/approval/queue.js");
    const host = await fx.host({ envelope: "default", stateUrl: pg.url });
    const approver = (ms: number) => ({
      name: "queue",
      request: (req: Parameters<ReturnType<typeof queueApprover>["request"]>[0], s: AbortSignal) =>
        queueApprover(host.store.approvals, { workspace: host.workspace, down: () => host.store.down }).request(
          { ...req, timeoutMs: ms },
          s,
        ),
    });
    const other = await PgStore.open(pg.url, fx.state);
    try {
      // One call waits 3 s (PostgreSQL stays down longer), one waits 60 s (it comes back first).
      const short = host.call(
        "write_file",
        { path: "short.txt", content: "s\n" },
        { approver: approver(3000), session: "short" },
      );
      const long = host.call(
        "write_file",
        { path: "long.txt", content: "l\n" },
        { approver: approver(60_000), session: "long" },
      );
      assert.ok(await waitFor(async () => (await other.approvals.list()).length === 2));
      const started = Date.now();
      pg.kill9();
      const refused = await short;
      assert.equal(refused.status, "refused");
      assert.match(JSON.stringify(refused), /could not be reached|unreachable/);
      assert.ok(Date.now() - started < 3000 + 5000 + 2000, "refused within its wait (and the store wait), not later");
      assert.equal(existsSync(path.join(fx.root, "short.txt")), false);
      // A new call needing a synced decision while it is down: refused with the reason, bounded.
      const t0 = Date.now();
      const yes = { name: "yes", request: async () => ({ approved: true, by: "the test" }) };
      const blocked = await host.call("create_directory", { path: "d" }, { approver: yes });
      assert.equal(blocked.status, "refused", JSON.stringify(blocked));
      assert.match(JSON.stringify(blocked), /state store/);
      assert.ok(Date.now() - t0 < 10_000);
      assert.equal(existsSync(path.join(fx.root, "d")), false, "nothing ran");
      pg.start();
      // The still-pending request is visible again, answered from another instance, and served.
      const item = await listed(other, "long");
      assert.ok(
        await other.approvals.answer(item.id, {
          approved: true,
          scope: "once",
          shownSha256: sha256Hex(shownText(item)),
        }),
      );
      const served = await long;
      assert.equal(served.status, "ok", JSON.stringify(served));
      assert.equal(readFileSync(path.join(fx.root, "long.txt"), "utf8"), "l\n");
      // And new calls are served again.
      assert.ok(
        await waitFor(
          async () => (await host.call("create_directory", { path: "d2" }, { approver: yes })).status === "ok",
        ),
      );
    } finally {
      await other.close();
      await host.shutdown("test over");
    }
  });
});
