// HTTP sessions that clients abandon (no DELETE): 2,000 sessions are opened (initialize, initialized,
// tools/list) and left; latch closes them when idle. The server's RSS is read from /proc before, at the
// peak, after they expired, and after a second round of 2,000, so a leak per session would show as
// growth from one round to the next.
// Usage: npm run build && node --import tsx bench/http-sessions.ts [--sessions N] [--no-write]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { rawPost, rawSession } from "../test/helpers/mcp.js";
import { measuredLine, publish, REPO, watchLoad } from "./report.js";

const LATCH = path.join(REPO, "dist/cli/main.js");
const i = process.argv.indexOf("--sessions");
const SESSIONS = i > 0 ? Number(process.argv[i + 1]) : 2000;
const IDLE_S = 2;
const TOKEN = "bench-token";

const rss = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const mb = (n: number) => (n / 2 ** 20).toFixed(1);

async function openAndAbandon(url: string): Promise<void> {
  const sid = await rawSession(url, TOKEN);
  const list = await rawPost(url, TOKEN, { jsonrpc: "2.0", id: 2, method: "tools/list" }, sid);
  if (list.status !== 200) throw new Error(`tools/list: ${list.status}`);
  await list.text();
}

async function round(url: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < SESSIONS) {
      next++;
      await openAndAbandon(url);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

async function main(): Promise<void> {
  const load = watchLoad();
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-sessions-"));
  const child = spawn(
    process.execPath,
    [
      LATCH,
      "mcp",
      "--http",
      "--port",
      "0",
      "--root",
      REPO,
      "--state-dir",
      path.join(base, "state"),
      "--session-idle",
      String(IDLE_S),
      "--max-sessions",
      String(SESSIONS + 100),
    ],
    { env: { ...process.env, LATCH_TOKEN: TOKEN, LATCH_LOG: "info" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let closed = 0;
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d: Buffer) => (closed += (String(d).match(/closed: idle/g) ?? []).length));
  const rows: string[] = [];
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setInterval(() => {
        const m = /MCP endpoint: (\S+)/.exec(out);
        if (m) {
          clearInterval(t);
          resolve(m[1]);
        }
      }, 20);
      child.once("exit", (c) => reject(new Error(`latch exited ${c}`)));
    });
    await openAndAbandon(url);
    const waitClosed = async (n: number) => {
      for (let k = 0; k < 600 && closed < n; k++) await new Promise((r) => setTimeout(r, 100));
      if (closed < n) throw new Error(`only ${closed} of ${n} sessions expired`);
      await new Promise((r) => setTimeout(r, 1000)); // let the closes settle
    };
    await waitClosed(1);
    const before = rss(child.pid!);
    const t0 = performance.now();
    await round(url);
    const openMs = performance.now() - t0;
    const peak = rss(child.pid!);
    await waitClosed(1 + SESSIONS);
    const after1 = rss(child.pid!);
    await round(url);
    const peak2 = rss(child.pid!);
    await waitClosed(1 + 2 * SESSIONS);
    const after2 = rss(child.pid!);
    rows.push(
      `| moment | latch RSS (MiB) |`,
      `|---|---|`,
      `| one session opened and expired (baseline) | ${mb(before)} |`,
      `| ${SESSIONS} sessions open, abandoned (no DELETE) | ${mb(peak)} |`,
      `| after they expired (idle ${IDLE_S} s) | ${mb(after1)} |`,
      `| a second ${SESSIONS} open | ${mb(peak2)} |`,
      `| after those expired | ${mb(after2)} |`,
      "",
      `Opening ${SESSIONS} sessions (initialize, initialized, tools/list; 16 at a time) took ${(openMs / 1000).toFixed(1)} s. ` +
        `The bound, stated: after expiry, RSS stays within baseline + 64 MiB, and a second round adds at most 16 MiB over the first ` +
        `(here: +${mb(after1 - before)} MiB after the first round, ${after2 >= after1 ? "+" : ""}${mb(after2 - after1)} MiB from the first round's to the second's).`,
    );
    if (after1 - before > 64 * 2 ** 20 || after2 - after1 > 16 * 2 ** 20)
      throw new Error(`over the stated bound: ${rows.join("\n")}`);
  } finally {
    child.kill("SIGTERM");
    rmSync(base, { recursive: true, force: true });
  }
  load.stop();
  publish(
    "http-sessions",
    "HTTP sessions opened and abandoned: the server's memory after idle expiry",
    [
      measuredLine(`node --import tsx bench/http-sessions.ts --sessions ${SESSIONS}`, load, " (after `npm run build`)"),
      "",
      ...rows,
      "",
      "RSS does not fall after expiry (V8 keeps the heap pages it grew to); the second round is the leak check: sessions that were not freed would add about as much again as the first round did. The machine was shared with other engineers' builds and tests while this ran (see the load).",
    ].join("\n"),
  );
}

await main();
