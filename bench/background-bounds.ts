// What a `latch mcp` server holds for a session's background processes (issue 27), driven by the MCP
// SDK client over stdio: 400 process_input calls of 1 MiB each to a process that never reads its
// stdin, then 200 background runs that finish (seq 1 50000). Reports the server's RSS (VmRSS) before and after
// each, what the answers said (bytes taken, calls refused), and what process_list lists.
// Usage: npm run build && node --import tsx bench/background-bounds.ts [--before OLD/dist/cli/main.js]
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fieldsOf, type ToolResult } from "../test/helpers/mcp.js";
import { measuredLine, noiseNote, publish, REPO, thisTree, watchLoad } from "./report.js";

const AFTER = path.join(REPO, "dist/cli/main.js");
const bi = process.argv.indexOf("--before");
const BEFORE = bi > 0 ? path.resolve(process.argv[bi + 1]) : undefined;
const INPUTS = 400;
const RUNS = 200;
const MiB = 2 ** 20;

const rss = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

interface Row {
  label: string;
  inputS: number;
  inputGrowth: number;
  ok: number;
  refused: number;
  taken: number;
  runsGrowth: number;
  listed: number;
}

async function run(label: string, cli: string, base: string): Promise<Row> {
  const root = path.join(base, "ws");
  mkdirSync(root, { recursive: true });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "mcp", "--root", root, "--state-dir", path.join(base, `state-${label.split(" ")[0]}`), "--yes"],
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-background", version: "1" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) => {
    const out = (await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as ToolResult;
    return { error: out.isError === true, fields: out.isError ? {} : fieldsOf(out) };
  };
  try {
    const pid = transport.pid!;
    const started = await call("local_shell", { command: "sleep", args: ["3600"], background: true });
    const id = started.fields.id as string;
    const text = "x".repeat(MiB);
    const before = rss(pid);
    let ok = 0;
    let refused = 0;
    let taken = 0;
    const t0 = performance.now();
    for (let i = 0; i < INPUTS; i++) {
      // wait_ms 0 (the old build ignores it: it is an unknown key there, so it is left out for it)
      const r = await call("process_input", { id, text, ...(label.startsWith("before") ? {} : { wait_ms: 0 }) });
      if (r.error) refused++;
      else {
        ok++;
        taken += Number(r.fields.taken_bytes ?? r.fields.written_bytes ?? 0);
      }
    }
    const inputS = (performance.now() - t0) / 1000;
    const inputGrowth = rss(pid) - before;
    await call("process_kill", { id });
    const runsBefore = rss(pid);
    for (let i = 0; i < RUNS; i++) {
      const r = await call("local_shell", { command: "seq", args: ["1", "50000"], background: true });
      const rid = r.fields.id as string;
      if (r.error || !rid) throw new Error(`run ${i} did not start`);
      for (;;) {
        const o = await call("process_output", { id: rid, since: 1e12 });
        if (o.error) throw new Error(`process_output of ${rid} failed`);
        if (o.fields.running === false) break;
        await new Promise((done) => setTimeout(done, 100));
      }
    }
    const runsGrowth = rss(pid) - runsBefore;
    const listed = await call("process_list", {});
    return {
      label,
      inputS,
      inputGrowth,
      ok,
      refused,
      taken,
      runsGrowth,
      listed: (listed.fields.processes as unknown[]).length,
    };
  } finally {
    await client.close();
  }
}

const load = watchLoad();
const rows: Row[] = [];
const base = mkdtempSync(path.join(os.tmpdir(), "latch-bg-bounds-"));
try {
  if (BEFORE) rows.push(await run("before", BEFORE, base));
  rows.push(await run(`after (${thisTree()})`, AFTER, base));
} finally {
  load.stop();
  rmSync(base, { recursive: true, force: true });
}
const mb = (n: number) => (n / MiB).toFixed(0);
publish(
  "background-bounds",
  "Background processes: what latch holds for a session (process_input, finished runs)",
  [
    measuredLine(
      `node --import tsx bench/background-bounds.ts${BEFORE ? " --before OLD/dist/cli/main.js" : ""}`,
      load,
      " (after `npm run build`)",
    ),
    noiseNote(load),
    "",
    `${INPUTS} process_input calls of 1 MiB to \`sleep 3600\` (never reads its stdin), then ${RUNS} background runs of \`seq 1 50000\` (289 KB of output each) that finish. RSS is the server's VmRSS.`,
    "",
    "| build | inputs s | answered ok | refused | bytes said taken | RSS growth, inputs (MiB) | RSS growth, runs (MiB) | process_list rows |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.inputS.toFixed(1)} | ${r.ok} | ${r.refused} | ${r.taken} | ${mb(r.inputGrowth)} | ${mb(r.runsGrowth)} | ${r.listed} |`,
    ),
  ].join("\n"),
);
