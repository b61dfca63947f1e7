// The approval console's server, with plain HTTP requests against a real host whose call waits in the
// real queue: the token only in the Authorization header (not the query), Host and Origin checked,
// the CSP, the answer bound to the sha256 of the text shown, two racing answers → one decision and
// one log entry, who answered in the policy log, and the log viewer naming where a chain breaks.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { after, before, test } from "node:test";
import { queueApprover } from "../../src/approval/queue.js";
import { ApprovalQueue, sqliteStore } from "../../src/store/sqlite.js";
import { serveConsole, type ConsoleServer } from "../../src/console/server.js";
import { sha256Hex } from "../../src/approval/queue.js";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture } from "../helpers/fixture.js";
import { waitFor } from "../helpers/wait.js";

const fx = makeFixture();
const TOKEN = "t".repeat(43);
let host: Host;
let queue: ApprovalQueue;
let server: ConsoleServer;
let base: string;

before(async () => {
  host = await fx.host({ envelope: "default" });
  queue = new ApprovalQueue(host.state.db);
  server = await serveConsole({
    store: sqliteStore(host.state.db),
    db: host.state.db,
    logDir: path.join(fx.state, "logs"),
    token: TOKEN,
    bind: "127.0.0.1",
    port: 0,
  });
  base = server.url.replace(/\/console\/$/, "");
});
after(async () => {
  await server.close();
  queue.close();
  fx.cleanup();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request, so Host and Origin are exactly what the test says (fetch would fix Host). */
function send(
  method: string,
  route: string,
  opts: { headers?: Record<string, string>; body?: string; auth?: boolean } = {},
): Promise<Reply> {
  const u = new URL(route, base);
  const headers: Record<string, string> = {
    host: u.host,
    ...(opts.auth === false ? {} : { authorization: `Bearer ${TOKEN}` }),
    ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

interface Pending {
  id: string;
  shown: string;
  call: Promise<CallResult>;
}

/** An edit_file call that waits in the queue for a person, as `latch mcp` without elicitation does. */
async function waitingEdit(rel: string, from: string, to: string): Promise<Pending> {
  fx.write({ [rel]: `${from}\n` });
  assert.equal((await host.call("read_file", { path: rel })).status, "ok");
  const before = new Set(queue.list().map((q) => q.id));
  const call = host.call(
    "edit_file",
    { path: rel, old_string: from, new_string: to },
    { approver: queueApprover(sqliteStore(host.state.db).approvals, { workspace: host.workspace }) },
  );
  let id = "";
  assert.ok(await waitFor(() => !!(id = queue.list().find((q) => !before.has(q.id))?.id ?? "")));
  const listed = JSON.parse((await send("GET", "/console/api/approvals")).body) as { id: string; shown: string }[];
  return { id, shown: listed.find((q) => q.id === id)!.shown, call };
}

const answer = (p: Pending, decision: string, extra: Record<string, unknown> = {}, headers = {}) =>
  send("POST", `/console/api/approvals/${p.id}`, {
    body: JSON.stringify({ decision, shown_sha256: sha256Hex(p.shown), ...extra }),
    headers,
  });

const logText = () => readFileSync(host.policyLog, "utf8");
/** The edit_file decisions on the log (a denied one names no file: count them around the call). */
const editDecisions = () =>
  logText()
    .split("\n")
    .filter((l) => l.includes('"type":"effect_decision"') && l.includes('"tool":"edit_file"'));

test("the page needs no token and allows no inline script; the API needs the token in the Authorization header", async () => {
  const page = await send("GET", "/console/", { auth: false });
  assert.equal(page.status, 200);
  assert.match(String(page.headers["content-security-policy"]), /^default-src 'self';/);
  assert.doesNotMatch(page.body, /<script>|<script [^>]*>[^<]/, "no inline script");
  assert.equal((await send("GET", "/console/api/approvals", { auth: false })).status, 401);
  assert.equal(
    (await send("GET", `/console/api/approvals?token=${TOKEN}`, { auth: false })).status,
    401,
    "never the query",
  );
  assert.equal(
    (await send("GET", "/console/api/approvals", { auth: false, headers: { authorization: "Bearer nope" } })).status,
    401,
  );
  assert.equal((await send("GET", "/console/api/approvals")).status, 200);
});

test("Host: evil.test and a foreign Origin are refused; the call still waits and nothing is written", async () => {
  const p = await waitingEdit("host.txt", "one", "two");
  const rebound = await send("GET", "/console/api/approvals", { headers: { host: "evil.test" } });
  assert.equal(rebound.status, 403);
  assert.match(rebound.body, /Host header/);
  const viaHost = await answer(p, "once", {}, { host: `evil.test:${new URL(base).port}` });
  assert.equal(viaHost.status, 403);
  const cross = await answer(p, "once", {}, { origin: "http://evil.test" });
  assert.equal(cross.status, 403);
  assert.match(cross.body, /Origin/);
  // A cross-site form post carries no Authorization header at all.
  const form = await send("POST", `/console/api/approvals/${p.id}`, {
    auth: false,
    headers: { origin: "null", "content-type": "application/x-www-form-urlencoded" },
    body: "decision=once",
  });
  assert.equal(form.status, 403);
  assert.equal(queue.get(p.id)?.state, "pending", "still waiting");
  assert.equal(readFileSync(path.join(fx.root, "host.txt"), "utf8"), "one\n");
  assert.equal((await answer(p, "deny", { note: "not now" })).status, 200);
  const r = await p.call;
  assert.equal(r.status, "refused");
  assert.match((r as { reason: string }).reason, /the person, in the latch console \(approval [0-9a-f]{8}\)/);
  assert.match((r as { reason: string }).reason, /a person denied it: not now/);
  assert.equal(readFileSync(path.join(fx.root, "host.txt"), "utf8"), "one\n");
});

test("an approval must carry the sha256 of the text shown: another text is refused; the shown one lands", async () => {
  const p = await waitingEdit("sha.txt", "alpha", "beta");
  assert.match(p.shown, /-alpha\n\+beta/);
  const wrong = await send("POST", `/console/api/approvals/${p.id}`, {
    body: JSON.stringify({ decision: "once", shown_sha256: sha256Hex(p.shown.replace("beta", "gamma")) }),
  });
  assert.equal(wrong.status, 409);
  assert.match(wrong.body, /what the page showed is not what approval/);
  assert.equal(queue.get(p.id)?.state, "pending");
  const bad = await send("POST", `/console/api/approvals/${p.id}`, { body: JSON.stringify({ decision: "yes" }) });
  assert.equal(bad.status, 400);
  assert.match((JSON.parse(bad.body) as { error: string }).error, /"decision": "once" \| "session" \| "deny"/);
  const ok = await answer(p, "once");
  assert.equal(ok.status, 200, ok.body);
  assert.equal((await p.call).status, "ok");
  assert.equal(readFileSync(path.join(fx.root, "sha.txt"), "utf8"), "beta\n");
  const decision = editDecisions().at(-1)!;
  assert.match(decision, /sha\.txt sha256:/);
  assert.match(decision, /approved by the person, in the latch console \(approval [0-9a-f]{8}\) \(once\)/);
});

test("two answers at once: exactly one wins, one decision is logged, the file matches the winner", async () => {
  const p = await waitingEdit("race.txt", "left", "right");
  const before = editDecisions().length;
  const [a, b] = await Promise.all([answer(p, "once"), answer(p, "deny")]);
  assert.deepEqual([a.status, b.status].sort(), [200, 409]);
  const loser = a.status === 409 ? a : b;
  assert.match(loser.body, /answered elsewhere first|is not waiting/);
  const r = await p.call;
  const approved = a.status === 200;
  assert.equal(r.status, approved ? "ok" : "refused");
  assert.equal(readFileSync(path.join(fx.root, "race.txt"), "utf8"), approved ? "right\n" : "left\n");
  assert.equal(editDecisions().length, before + 1, "one decision on the log");
});

test("the log viewer lists this state dir's runs by name only, and names the line where a chain breaks", async () => {
  const runs = JSON.parse((await send("GET", "/console/api/logs")).body) as { file: string }[];
  const mine = path.basename(host.policyLog);
  assert.ok(runs.some((r) => r.file === mine));
  assert.equal((await send("GET", `/console/api/logs/${encodeURIComponent("../latch.db")}`)).status, 404);
  const good = JSON.parse((await send("GET", `/console/api/logs/${mine}`)).body);
  assert.equal(good.rows[0].type, "run_started");
  assert.ok(good.rows.some((r: any) => r.tool === "edit_file" && r.final === "allow"));
  // A finished run, then one line changed on disk.
  const other = await fx.host({ envelope: "default" });
  await other.call("list_dir", { path: "." });
  await other.call("list_dir", { path: "." });
  other.close();
  const clean = JSON.parse((await send("GET", `/console/api/logs/${path.basename(other.policyLog)}`)).body);
  assert.equal(clean.verify.ok, true);
  assert.equal(clean.kept.matches, true);
  const lines = readFileSync(other.policyLog, "utf8").split("\n");
  assert.match(lines[1], /"tool":"list_dir"/);
  lines[1] = lines[1].replace('"tool":"list_dir"', '"tool":"list_dit"');
  writeFileSync(other.policyLog, lines.join("\n"));
  const broken = JSON.parse((await send("GET", `/console/api/logs/${path.basename(other.policyLog)}`)).body);
  assert.equal(broken.verify.ok, false);
  assert.equal(broken.verify.fault.line, 2);
  assert.match(broken.verify.fault.message, /record_sha256 does not match/);
  assert.deepEqual(
    broken.rows.map((r: any) => r.verified),
    broken.rows.map((r: any) => r.line < 2),
  );
});
