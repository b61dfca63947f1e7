// The approval console in a real browser: Debian's chromium, driven by playwright-core (no browser
// download; .ci/run installs the apt package). One browser for the file, pages reused. A real host's
// calls wait in the real queue; each scenario checks the disk and the policy log afterwards.
// LATCH_STRESS=1 measures the live-update latency over 100 new approvals (20 by default).
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { after, before, test } from "node:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { queueApprover } from "../../src/approval/queue.js";
import { ApprovalQueue, sqliteStore } from "../../src/store/sqlite.js";
import { serveConsole, type ConsoleServer } from "../../src/console/server.js";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture } from "../helpers/fixture.js";
import { plainTmpDir } from "../helpers/plain-tmp.js";
import { waitFor } from "../helpers/wait.js";

const CHROMIUM = "/usr/bin/chromium";
const fx = makeFixture();
// chromium puts its singleton socket under TMPDIR (a socket path holds 107 bytes at most) and its
// profile and crash reports under HOME's config and cache folders: a TMPDIR with a long path or a
// read-only HOME stops it at launch. So it gets its own short, writable folders for all of them.
const browserDir = plainTmpDir("latch-chromium-", "chromium's singleton socket", 36);
const browserEnv = {
  ...process.env,
  TMPDIR: browserDir,
  HOME: browserDir,
  XDG_CONFIG_HOME: path.join(browserDir, "config"),
  XDG_CACHE_HOME: path.join(browserDir, "cache"),
};
const TOKEN = "b".repeat(43);
let host: Host;
let queue: ApprovalQueue;
let server: ConsoleServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const dialogs: string[] = [];

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
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
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    env: browserEnv,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // evil.test is this machine, as a rebinding attacker's DNS would make it.
      "--host-resolver-rules=MAP evil.test 127.0.0.1",
    ],
  });
  context = await browser.newContext();
  context.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page = await openConsole();
});
after(async () => {
  await browser?.close();
  await server?.close();
  queue?.close();
  fx.cleanup();
  rmSync(browserDir, { recursive: true, force: true });
});

async function openConsole(): Promise<Page> {
  const p = await context.newPage();
  p.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await p.goto(`${server.url}#token=${TOKEN}`);
  await p.waitForFunction(() => document.getElementById("status")?.textContent === "live");
  assert.equal(new URL(p.url()).hash, "", "the token left the address bar");
  return p;
}

/** An edit that waits in the queue; resolves once its card is on `page`. */
async function waitingEdit(rel: string, before: string, from: string, to: string) {
  writeFileSync(path.join(fx.root, rel), before);
  assert.equal((await host.call("read_file", { path: rel })).status, "ok");
  const known = new Set(queue.list().map((q) => q.id));
  const call: Promise<CallResult> = host.call(
    "edit_file",
    { path: rel, old_string: from, new_string: to },
    { approver: queueApprover(sqliteStore(host.state.db).approvals, { workspace: host.workspace }) },
  );
  let id = "";
  assert.ok(await waitFor(() => !!(id = queue.list().find((q) => !known.has(q.id))?.id ?? "")));
  await page.waitForSelector(`[data-id="${id}"]`);
  return { id, call };
}

const card = (p: Page, id: string) => p.locator(`[data-id="${id}"]`);
/** The policy log's edit_file decisions (a denied one names no file: count them around the call). */
const editDecisions = () =>
  readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.includes('"type":"effect_decision"') && l.includes('"tool":"edit_file"'));

test("a waiting call shows its exact diff; approving it writes the previewed bytes", async () => {
  const { id, call } = await waitingEdit("a.txt", "one\r\ntwo\nthree\n", "two", "TWO\u202e");
  const shown = await card(page, id).locator("pre.what").textContent();
  assert.equal(shown, queue.get(id)!.diff, "byte-identical to the diff latch built");
  assert.match(shown!, /-two\n\+TWO\\u202e/, "the bidi control is shown escaped");
  await card(page, id).getByRole("button", { name: "Approve once" }).click();
  assert.equal((await call).status, "ok");
  assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "one\r\nTWO\u202e\nthree\n");
  await page.waitForFunction(
    (i) => document.querySelector(`[data-id="${i}"]`)?.getAttribute("data-result") === "ok",
    id,
  );
  assert.match(editDecisions().at(-1)!, /approved by the person, in the latch console.*a\.txt sha256:/);
});

test("the file changes before the click: the approval is refused as stale and nothing is written", async () => {
  const { id, call } = await waitingEdit("stale.txt", "x\ny\n", "y", "Y");
  writeFileSync(path.join(fx.root, "stale.txt"), "x\ny\nsneaked\n");
  await card(page, id).getByRole("button", { name: "Approve once" }).click();
  const r = await call;
  assert.equal(r.status, "refused");
  assert.match((r as { reason: string }).reason, /changed|stale/);
  assert.equal(readFileSync(path.join(fx.root, "stale.txt"), "utf8"), "x\ny\nsneaked\n");
});

test("two tabs approve and deny at once: one decision, one log entry", async () => {
  const other = await openConsole();
  try {
    const { id, call } = await waitingEdit("race.txt", "l\n", "l", "r");
    const before = editDecisions().length;
    await other.waitForSelector(`[data-id="${id}"]`);
    await Promise.all([
      card(page, id).getByRole("button", { name: "Approve once" }).click(),
      card(other, id).getByRole("button", { name: "Deny" }).click(),
    ]);
    const r = await call;
    const results = await Promise.all(
      [page, other].map((p) =>
        p.waitForFunction((i) => document.querySelector(`[data-id="${i}"]`)?.getAttribute("data-result"), id),
      ),
    ).then((hs) => Promise.all(hs.map((h) => h.jsonValue())));
    assert.deepEqual([...results].sort(), ["ok", "refused"]);
    assert.equal(readFileSync(path.join(fx.root, "race.txt"), "utf8"), r.status === "ok" ? "r\n" : "l\n");
    assert.equal(editDecisions().length, before + 1, "one decision on the log");
  } finally {
    await other.close();
  }
});

test("a page on another origin cannot approve, nor can a rebound Host name reach the console", async () => {
  const { id, call } = await waitingEdit("cross.txt", "c\n", "c", "C");
  const before = editDecisions().length;
  const target = `${server.url}api/approvals/${id}`;
  const evil: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<form id=f method=POST action="${target}" enctype="text/plain"><input name='{"decision":"once","x":"' value='"}'></form>
<script>
fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: '{"decision":"once"}' });
fetch(${JSON.stringify(target)}, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer ${TOKEN}" }, body: '{"decision":"once"}' }).catch(() => {});
setTimeout(() => document.getElementById("f").submit(), 300);
</script>`);
  });
  await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
  const attacker = await context.newPage();
  try {
    const port = (evil.address() as { port: number }).port;
    await attacker.goto(`http://127.0.0.1:${port}/`);
    await attacker.waitForTimeout(1000); // the attacks are fire-and-forget: give them time to land
    const rebound = await attacker.goto(`http://evil.test:${new URL(server.url).port}/console/`);
    assert.equal(rebound?.status(), 403);
    assert.equal(queue.get(id)?.state, "pending", "no attack answered it");
    assert.equal(readFileSync(path.join(fx.root, "cross.txt"), "utf8"), "c\n");
    assert.equal(editDecisions().length, before, "nothing decided");
  } finally {
    await attacker.close();
    await new Promise((r) => evil.close(r));
  }
  await card(page, id).getByRole("button", { name: "Deny" }).click();
  assert.equal((await call).status, "refused");
});

test("a file name and a diff holding markup run no script and make no element", async () => {
  const rel = `"><img src=x onerror=alert(1)>.txt`;
  const payload = `</script><script>alert(2)</script><img src=x onerror=alert(3)>`;
  const { id, call } = await waitingEdit(rel, "safe\n", "safe", payload);
  const c = card(page, id);
  assert.match((await c.locator("pre.what").textContent())!, /\+<\/script><script>alert\(2\)<\/script><img/);
  assert.equal(await page.locator("img").count(), 0, "no element was made from the text");
  assert.equal(await page.locator("script").count(), 1, "only the console's own script");
  await c.getByRole("button", { name: "Deny" }).click();
  assert.equal((await call).status, "refused");
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, [], "no alert ran");
});

test("a tampered log: the viewer shows the line where the chain breaks", async () => {
  const other = await fx.host({ envelope: "default" });
  await other.call("list_dir", { path: "." });
  other.close();
  const lines = readFileSync(other.policyLog, "utf8").split("\n");
  lines[1] = lines[1].replace('"tool":"list_dir"', '"tool":"list_dit"');
  writeFileSync(other.policyLog, lines.join("\n"));
  const name = path.basename(other.policyLog);
  await page.waitForSelector(`#run option[value="${name}"]`, { state: "attached" });
  await page.selectOption("#run", name);
  await page.waitForFunction(() => document.getElementById("verify")?.dataset.breakLine === "2");
  assert.match(
    (await page.locator("#verify").textContent())!,
    /the chain breaks at line 2: record_sha256 does not match/,
  );
  assert.equal(await page.locator('tr[data-line="2"]').getAttribute("class"), "broken");
});

test("live updates: a new approval appears within a sane bound; p50 printed", async () => {
  const n = process.env.LATCH_STRESS ? 100 : 20;
  const adder = new ApprovalQueue(host.state.db); // another connection, as another latch process
  const lat: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const added = Date.now();
      const id = adder.add({
        tool: "write_file",
        args: { path: `n${i}.txt` },
        session: "bench",
        reason: "bench",
        timeoutMs: 60_000,
        host: "bench",
        workspace: "/bench",
        shownSha256: "0".repeat(64),
      });
      const seen = await page.waitForFunction(
        (x) => document.querySelector(`[data-id="${x}"]`)?.getAttribute("data-seen"),
        id,
      );
      lat.push(Number(await seen.jsonValue()) - added);
      adder.remove(id);
    }
  } finally {
    adder.close();
  }
  lat.sort((a, b) => a - b);
  const p50 = lat[Math.floor(lat.length / 2)];
  console.log(`console live update over ${n} approvals: p50 ${p50} ms, max ${lat[lat.length - 1]} ms`);
  assert.ok(p50 < 2000, `p50 ${p50} ms: the page is not following the queue`);
});
