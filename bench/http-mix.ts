// The 20-session HTTP mix: 20 MCP sessions over streamable HTTP at once, each making 200 calls in a
// loop of read_file → edit_file → grep → list_dir on its own file (so 50 edits a session), against
// one `latch mcp --http`. Reports calls/s, p50/p99 latency per call, the server's RSS before and
// after, and whether every edit is exactly on disk (each session's file holds its 50 lines, in order).
// With --before DIST (a `dist/cli/main.js` of an older build) it runs that build too, in the same run.
// Usage: npm run build && node --import tsx bench/http-mix.ts [--before OLD/dist/cli/main.js --before-label REV] [--no-write]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { measuredLine, percentile, publish, REPO, watchLoad, noiseNote, thisTree } from "./report.js";

const SESSIONS = 20;
const CALLS = 200;
const TOKEN = "bench-token";
const AFTER = path.join(REPO, "dist/cli/main.js");
const bi = process.argv.indexOf("--before");
const BEFORE = bi > 0 ? path.resolve(process.argv[bi + 1]) : undefined;
const li = process.argv.indexOf("--before-label");
const BEFORE_LABEL = li > 0 ? process.argv[li + 1] : "the older build";

const rss = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
const mb = (n: number) => (n / 2 ** 20).toFixed(1);

interface Row {
  label: string;
  callsPerS: number;
  p50: number;
  p99: number;
  rssBefore: number;
  rssAfter: number;
  errors: number;
  exact: boolean;
}

async function run(label: string, cli: string): Promise<Row> {
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-http-mix-"));
  const root = path.join(base, "ws");
  mkdirSync(root);
  for (let s = 0; s < SESSIONS; s++) {
    writeFileSync(path.join(root, `s${s}.txt`), "END\n");
    writeFileSync(path.join(root, `notes-${s}.md`), "alpha\nneedle here\nomega\n".repeat(20));
  }
  const child = spawn(
    process.execPath,
    [cli, "mcp", "--http", "--port", "0", "--root", root, "--state-dir", path.join(base, "state")],
    { env: { ...process.env, LATCH_TOKEN: TOKEN }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /MCP endpoint: (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once("exit", (c) => reject(new Error(`latch exited ${c}`)));
  });
  try {
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const c = new Client({ name: "http-mix", version: "1" });
        await c.connect(
          new StreamableHTTPClientTransport(new URL(url), {
            requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
          }),
        );
        return c;
      }),
    );
    const rssBefore = rss(child.pid!);
    const lat: number[] = [];
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (c, s) => {
        const file = `s${s}.txt`;
        for (let i = 0; i < CALLS / 4; i++) {
          const calls: [string, Record<string, unknown>][] = [
            ["read_file", { path: file, force: true }],
            ["edit_file", { path: file, old_string: "END\n", new_string: `line ${i}\nEND\n` }],
            ["grep", { pattern: "needle", path: `notes-${s}.md` }],
            ["list_dir", { path: "." }],
          ];
          for (const [name, args] of calls) {
            const a = performance.now();
            const out = await c.callTool({ name, arguments: args });
            lat.push(performance.now() - a);
            if (out.isError) errors++;
          }
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    const rssAfter = rss(child.pid!);
    await Promise.all(clients.map((c) => c.close()));
    let exact = true;
    for (let s = 0; s < SESSIONS; s++) {
      const want = Array.from({ length: CALLS / 4 }, (_, i) => `line ${i}\n`).join("") + "END\n";
      if (readFileSync(path.join(root, `s${s}.txt`), "utf8") !== want) exact = false;
    }
    return {
      label,
      callsPerS: (SESSIONS * CALLS) / secs,
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      rssBefore,
      rssAfter,
      errors,
      exact,
    };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(base, { recursive: true, force: true });
  }
}

const load = watchLoad();
const rows: Row[] = [];
// Two rounds, alternating builds, so a burst of load on the shared machine does not land on one side only.
for (let round = 0; round < 2; round++) {
  if (BEFORE) rows.push(await run(`before (${BEFORE_LABEL})`, BEFORE));
  rows.push(await run(`after (${thisTree()})`, AFTER));
}
load.stop();
const table = [
  "| build | calls/s | p50 ms | p99 ms | RSS before → after (MB) | errors | edits exact |",
  "|---|---:|---:|---:|---|---:|---|",
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.callsPerS.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${mb(r.rssBefore)} → ${mb(r.rssAfter)} | ${r.errors} | ${r.exact ? "yes" : "NO"} |`,
  ),
].join("\n");
publish(
  "http-mix",
  "HTTP mix: 20 sessions × 200 calls (read_file, edit_file, grep, list_dir)",
  [
    measuredLine(
      `node --import tsx bench/http-mix.ts${BEFORE ? ` --before OLD/dist/cli/main.js --before-label ${BEFORE_LABEL}` : ""}`,
      load,
      " (after `npm run build`)",
    ),
    noiseNote(load),
    "",
    table,
  ].join("\n"),
);
