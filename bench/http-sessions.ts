// HTTP sessions that clients abandon (no DELETE): 2,000 sessions are opened (initialize, initialized,
// tools/list) and left; latch closes them when idle. The server runs with gc-on-signal.mjs preloaded:
// after each round has expired, a full collection, then its heap in use and RSS. Three rounds, so a
// leak per session would show as heap growth from one round to the next; RSS alone is not a leak check
// (V8 keeps the pages it grew to, and when it collects decides what RSS shows).
// Usage: npm run build && node --import tsx bench/http-sessions.ts [--sessions N] [--no-write]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { rawPost, rawSession } from "../test/helpers/mcp.js";
import { measuredLine, publish, REPO, watchLoad } from "./report.js";

const LATCH = path.join(REPO, "dist/cli/main.js");
const i = process.argv.indexOf("--sessions");
const SESSIONS = i > 0 ? Number(process.argv[i + 1]) : 2000;
const IDLE_S = 2;
const TOKEN = "bench-token";

const ROUNDS = 3;
const GC_PRELOAD = pathToFileURL(path.join(REPO, "bench/gc-on-signal.mjs")).href;

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
      "--expose-gc",
      "--import",
      GC_PRELOAD,
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
  let heapReport: { heap: number; rss: number } | undefined;
  child.stderr.on("data", (d: Buffer) => {
    closed += (String(d).match(/closed: idle/g) ?? []).length;
    const m = /latch-bench-heap (\d+) (\d+)/.exec(String(d));
    if (m) heapReport = { heap: Number(m[1]), rss: Number(m[2]) };
  });
  /** A full collection in the server, then what it still holds. */
  const collected = async () => {
    heapReport = undefined;
    child.kill("SIGUSR2");
    for (let k = 0; k < 250 && !heapReport; k++) await new Promise((r) => setTimeout(r, 20));
    const got = heapReport as { heap: number; rss: number } | undefined;
    if (!got) throw new Error("the server did not report its heap");
    return got;
  };
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
    const base0 = await collected();
    const after: { heap: number; rss: number; peak: number; openMs: number }[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const t0 = performance.now();
      await round(url);
      const openMs = performance.now() - t0;
      const peak = rss(child.pid!);
      await waitClosed(1 + r * SESSIONS);
      after.push({ ...(await collected()), peak, openMs });
    }
    rows.push(
      `| moment | heap in use after a full GC (MiB) | RSS (MiB) |`,
      `|---|---|---|`,
      `| one session opened and expired (baseline) | ${mb(base0.heap)} | ${mb(base0.rss)} |`,
      ...after.flatMap((a, k) => [
        `| round ${k + 1}: ${SESSIONS} sessions open, abandoned (no DELETE) | | ${mb(a.peak)} (peak) |`,
        `| round ${k + 1}: after they expired (idle ${IDLE_S} s) | ${mb(a.heap)} | ${mb(a.rss)} |`,
      ]),
      "",
      `Opening ${SESSIONS} sessions (initialize, initialized, tools/list; 16 at a time) took ${(after[0].openMs / 1000).toFixed(1)} s. ` +
        `The bound, stated: after expiry the heap in use is within baseline + 8 MiB and each later round adds at most 1 MiB to it ` +
        `(a leak of 1 KB a session would add 2 MiB a round), and RSS stays within baseline + 96 MiB ` +
        `(here: heap +${mb(after[0].heap - base0.heap)} MiB after round 1, then ${after
          .slice(1)
          .map((a, k) => `${a.heap >= after[k].heap ? "+" : ""}${mb(a.heap - after[k].heap)}`)
          .join(" and ")} MiB; RSS +${mb(Math.max(...after.map((a) => a.rss)) - base0.rss)} MiB at most).`,
    );
    const leaks = after.slice(1).some((a, k) => a.heap - after[k].heap > 2 ** 20);
    if (after[0].heap - base0.heap > 8 * 2 ** 20 || leaks || after.some((a) => a.rss - base0.rss > 96 * 2 ** 20))
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
      "The server runs with `--expose-gc --import bench/gc-on-signal.mjs`: after each round has expired the bench sends SIGUSR2, and the server runs a full collection and reports its heap in use and RSS. The heap is the leak check: sessions that were not freed would add about as much again each round. RSS does not fall back after a round (V8 keeps the heap pages it grew to).",
    ].join("\n"),
  );
}

await main();
