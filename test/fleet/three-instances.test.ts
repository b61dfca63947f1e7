// A fleet: three `latch mcp` processes (stdio, separate state dirs and workspaces), one PostgreSQL,
// one `latch console --state`: racing approve/deny pairs from the console, as two people (or two
// tabs) answering at once. Exactly one answer wins each pair, the call does what that answer said and
// nothing else, each write runs at most once, and the store's copy of every run verifies.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { sha256Hex } from "../../src/approval/queue.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { connectOver, type McpSession, type ToolResult } from "../helpers/mcp.js";
import { startPostgres, type PgServer } from "../helpers/postgres.js";

const PAIRS = Number(process.env.LATCH_FLEET_PAIRS ?? (process.env.LATCH_STRESS === "1" ? 1000 : 30));
const INSTANCES = 3;

let pg: PgServer;
let fx: Fixture;
let consoleProc: ChildProcess;
let consoleUrl = "";
let token = "";
const sessions: McpSession[] = [];
const places: { root: string; state: string }[] = [];

before(async () => {
  pg = await startPostgres();
  fx = makeFixture("latch-fleet-");
  for (let i = 0; i < INSTANCES; i++) {
    const root = path.join(fx.base, `ws-${i}`);
    const state = path.join(fx.base, `state-${i}`);
    mkdirSync(root);
    places.push({ root, state });
    sessions.push(
      await connectOver("stdio", [
        "--root",
        root,
        "--state-dir",
        state,
        "--state",
        pg.url,
        "--envelope",
        "default",
        "--approval-wait",
        "120",
      ]),
    );
  }
  consoleProc = spawn(
    process.execPath,
    [CLI, "console", "--state", pg.url, "--state-dir", path.join(fx.base, "console"), "--port", "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  await new Promise<void>((resolve, reject) => {
    consoleProc.stdout!.on("data", (d) => {
      out += d;
      const m = /open: (\S+)#token=(\S+)/.exec(out);
      if (m) {
        consoleUrl = m[1];
        token = m[2];
        resolve();
      }
    });
    consoleProc.once("exit", (code) => reject(new Error(`latch console exited ${code}: ${out}`)));
  });
});

after(async () => {
  for (const s of sessions) await s.close().catch(() => undefined);
  consoleProc?.kill("SIGTERM");
  fx?.cleanup();
  pg?.destroy();
});

interface Listed {
  id: string;
  host: string;
  workspace: string;
  session: string;
  args: { path: string };
  shown: string;
}

async function api(route: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(new URL(`api/${route}`, consoleUrl), {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

/** The console lists the request of workspace `root` for `rel`, labelled; polled. */
async function listedFor(root: string, rel: string): Promise<Listed> {
  for (let i = 0; i < 2000; i++) {
    const { json } = await api("approvals");
    const hit = (json as Listed[]).find((q) => q.workspace === root && q.args.path === rel);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the console never listed ${rel} of ${root}`);
}

function refusedText(r: ToolResult): string {
  return JSON.stringify(r);
}

test(`${INSTANCES} latch mcp processes, one PostgreSQL, one console: ${PAIRS} racing approve/deny pairs, 0 double executions`, async () => {
  let approved = 0;
  let denied = 0;
  const runPair = async (i: number) => {
    const k = i % INSTANCES;
    const { root } = places[k];
    const rel = `p${i}.txt`;
    const call = sessions[k].client.callTool(
      { name: "write_file", arguments: { path: rel, content: `pair ${i}\n` } },
      undefined,
      { timeout: 120_000 },
    ) as Promise<ToolResult>;
    const item = await listedFor(root, rel);
    assert.equal(item.workspace, root, "labelled with its workspace");
    assert.ok(item.host.length > 0 && item.session.length > 0, "labelled with host and session");
    const shown_sha256 = sha256Hex(item.shown);
    const [yes, no] = await Promise.all([
      api(`approvals/${item.id}`, { decision: "once", shown_sha256 }),
      api(`approvals/${item.id}`, { decision: "deny", shown_sha256, note: "racing" }),
    ]);
    const wins = [yes.status, no.status].filter((s) => s === 200).length;
    assert.equal(wins, 1, `pair ${i}: exactly one answer wins (got ${yes.status} and ${no.status})`);
    assert.equal([yes.status, no.status].filter((s) => s === 409).length, 1, "the other is refused as stale");
    const result = await call;
    const file = path.join(root, rel);
    if (yes.status === 200) {
      approved++;
      assert.notEqual(result.isError, true, refusedText(result));
      assert.equal(readFileSync(file, "utf8"), `pair ${i}\n`, "approved: written");
    } else {
      denied++;
      assert.match(refusedText(result), /denied/, "denied: the call says so");
      assert.equal(existsSync(file), false, "denied: nothing written");
    }
  };
  // One pair per instance at a time: each instance has a call waiting while the others are answered.
  for (let i = 0; i < PAIRS; i += INSTANCES) {
    const batch = [];
    for (let j = i; j < Math.min(i + INSTANCES, PAIRS); j++) batch.push(runPair(j));
    await Promise.all(batch);
  }
  assert.equal(approved + denied, PAIRS);

  // The runs end (their last lines and checkpoints reach the store), then the store is counted.
  for (const s of sessions) await s.close();
  sessions.length = 0;
  const count = (where: string) => Number(pg.psql(`SELECT count(*) FROM log_records WHERE ${where}`).trim());
  const decisionsAllowed = count(
    `record::json->>'type' = 'effect_decision' AND record::json->>'tool' = 'write_file' AND record::json->>'final' = 'allow'`,
  );
  const decisionsDenied = count(
    `record::json->>'type' = 'effect_decision' AND record::json->>'tool' = 'write_file' AND record::json->>'final' = 'deny'`,
  );
  const ran = count(`record::json->>'type' = 'effect_outcome' AND record::json->>'status' = 'ok'`);
  assert.equal(decisionsAllowed, approved, "one allow decision per approved pair");
  assert.equal(decisionsDenied, denied, "one deny decision per denied pair");
  assert.equal(ran, approved, "0 double executions: one ok outcome per approved pair, none for a denied one");
  const v = await runCli([
    "log",
    "verify",
    "--state",
    pg.url,
    "--state-dir",
    places[0].state,
    ...places.flatMap((p) => ["--checkpoints", path.join(p.state, "checkpoints.jsonl")]),
  ]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  assert.match(v.stdout, new RegExp(`${INSTANCES} runs in .*: ${INSTANCES} ok, 0 failed`));
});
