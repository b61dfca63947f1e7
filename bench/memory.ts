// Peak RSS of a `latch mcp` server (VmHWM in /proc/PID/status: the process's high-water mark), driven
// by the MCP SDK client over stdio, at two sizes per task to show whether memory grows with size:
//   read_file_range deep in a 200 MiB and a 2 GiB text file,
//   edit_file near the end of a 10 MiB and a 100 MiB file (after a read_file_range of two lines),
//   local_shell running `yes | head -c N` for 100 MB and 1 GB of output.
// Every measurement gets a fresh server, so its high-water mark is that call's; the server's peak
// after tools/list alone (idle) is measured the same way. Files are generated in a temp dir, deleted after.
// Usage: npm run build && node --import tsx bench/memory.ts [--runs N]
// Writes its table between the memory markers in bench/RESULTS.md.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fieldsOf, type ToolResult } from "../test/helpers/mcp.js";
import { measuredLine, median, publish, REPO, watchLoad } from "./report.js";

const LATCH = path.join(REPO, "dist/cli/main.js");
const i = process.argv.indexOf("--runs");
const RUNS = i > 0 ? Number(process.argv[i + 1]) : 5;
const MiB = 2 ** 20;
const LINE = 64; // bytes per generated line, newline included

type Call = { name: string; arguments: Record<string, unknown> };

/** One fresh server: the peak RSS (bytes) after tools/list, and after `calls` (each checked). */
async function peakOf(
  root: string,
  state: string,
  calls: Call[],
  check: (results: any[]) => void,
): Promise<{ idle: number; peak: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [LATCH, "mcp", "--root", root, "--state-dir", state, "--yes"],
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-memory", version: "1" });
  await client.connect(transport);
  try {
    await client.listTools();
    const pid = transport.pid;
    if (!pid) throw new Error("the server has no pid");
    const idle = vmHwm(pid);
    const results = [];
    for (const c of calls) {
      const out = await client.callTool(c, undefined, { timeout: 600_000 });
      if (out.isError) throw new Error(`${c.name} failed: ${JSON.stringify(out).slice(0, 400)}`);
      results.push(fieldsOf(out as ToolResult));
    }
    check(results);
    return { idle, peak: vmHwm(pid) };
  } finally {
    await client.close();
  }
}

function vmHwm(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** `mib` MiB of 64-byte numbered lines, then `tail` (a line that occurs once). */
function generate(file: string, mib: number, tail = ""): number {
  const fd = openSync(file, "w");
  const perBlock = MiB / LINE;
  try {
    for (let b = 0; b < mib; b++) {
      const block = Buffer.allocUnsafe(MiB);
      for (let l = 0; l < perBlock; l++)
        block.write(`${String(b * perBlock + l + 1).padStart(12, "0")} ${"x".repeat(LINE - 14)}\n`, l * LINE, "latin1");
      writeSync(fd, block);
    }
    if (tail) writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
  return mib * perBlock + (tail ? 1 : 0);
}

interface Row {
  task: string;
  size: string;
  bytes: number;
  idle: number[];
  peak: number[];
}

async function measure(
  rows: Row[],
  task: string,
  size: string,
  bytes: number,
  one: (run: number) => Promise<{ idle: number; peak: number }>,
): Promise<void> {
  const row: Row = { task, size, bytes, idle: [], peak: [] };
  for (let r = 0; r < RUNS; r++) {
    const { idle, peak } = await one(r);
    row.idle.push(idle);
    row.peak.push(peak);
  }
  rows.push(row);
  console.log(`${task} ${size}: peak ${mb(median(row.peak))} MiB (idle ${mb(median(row.idle))} MiB)`);
}

const mb = (n: number) => (n / MiB).toFixed(1);

async function main(): Promise<void> {
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-memory-"));
  const load = watchLoad();
  const rows: Row[] = [];
  try {
    const root = path.join(base, "ws");
    mkdirSync(root);
    const state = (r: string) => path.join(base, `state-${r}`);

    // read_file_range: three lines near the end; the whole file is streamed (and hashed for the ledger).
    for (const [size, mib] of [
      ["200 MiB", 200],
      ["2 GiB", 2048],
    ] as const) {
      const name = `read-${mib}.log`;
      const lines = generate(path.join(root, name), mib);
      await measure(rows, "read_file_range near the end", size, mib * MiB, (r) =>
        peakOf(
          root,
          state(`read-${mib}-${r}`),
          [{ name: "read_file_range", arguments: { path: name, start_line: lines - 2 } }],
          ([res]) => {
            if (res.total_lines !== lines || !String(res.content).startsWith(String(lines - 2).padStart(12, "0")))
              throw new Error(`read_file_range: ${JSON.stringify(res).slice(0, 300)}`);
          },
        ),
      );
      rmSync(path.join(root, name));
    }

    // edit_file: a range read of two lines (enough for read-before-write), then one unique line replaced.
    for (const [size, mib] of [
      ["10 MiB", 10],
      ["100 MiB", 100],
    ] as const) {
      const name = `edit-${mib}.log`;
      generate(path.join(root, name), mib, "marker 0\n");
      await measure(rows, "edit_file (after a 2-line read_file_range)", size, mib * MiB, (r) =>
        peakOf(
          root,
          state(`edit-${mib}-${r}`),
          [
            { name: "read_file_range", arguments: { path: name, start_line: 1, end_line: 2 } },
            {
              name: "edit_file",
              arguments: { path: name, old_string: `marker ${r}\n`, new_string: `marker ${r + 1}\n` },
            },
          ],
          ([, res]) => {
            if (res.written !== true || res.new_bytes !== mib * MiB + `marker ${r + 1}\n`.length)
              throw new Error(`edit_file: ${JSON.stringify(res).slice(0, 300)}`);
          },
        ),
      );
      rmSync(path.join(root, name));
    }

    // local_shell: the output passes through latch's capture (head and tail kept, the middle counted).
    for (const [size, n] of [
      ["100 MB", 100_000_000],
      ["1 GB", 1_000_000_000],
    ] as const) {
      await measure(rows, "local_shell `yes | head -c N`", size, n, (r) =>
        peakOf(
          root,
          state(`shell-${n}-${r}`),
          [{ name: "local_shell", arguments: { command: `yes | head -c ${n}`, shell: true, timeout_ms: 600_000 } }],
          ([res]) => {
            // All but the kept head and tail (64 KiB each at most) was counted as cut: the output really passed.
            if (res.exit_code !== 0 || !(res.truncated.stdout > n - 2 * 65536 - 4096 && res.truncated.stdout <= n))
              throw new Error(`local_shell: ${JSON.stringify(res).slice(0, 300)}`);
          },
        ),
      );
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  load.stop();
  report(rows, load);
}

function report(rows: Row[], load: { range(): string }): void {
  const table = [
    "| task | size | peak RSS, median of " + RUNS + " (MiB) | idle peak (MiB) | peak − idle (MiB) |",
    "|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.task} | ${r.size} | ${mb(median(r.peak))} (${mb(Math.min(...r.peak))}–${mb(Math.max(...r.peak))}) | ${mb(median(r.idle))} | ${mb(median(r.peak) - median(r.idle))} |`,
    ),
  ];
  const growth = [
    "| task | size × | peak RSS growth between sizes (MiB) | growth ÷ added bytes |",
    "|---|---|---|---|",
  ];
  for (let k = 0; k + 1 < rows.length; k += 2) {
    const [a, b] = [rows[k], rows[k + 1]];
    const d = median(b.peak) - median(a.peak);
    growth.push(
      `| ${a.task} | ${a.size} → ${b.size} (${(b.bytes / a.bytes).toFixed(0)}×) | ${mb(d)} | ${(d / (b.bytes - a.bytes)).toFixed(4)} |`,
    );
  }
  const section = [
    measuredLine(`node --import tsx bench/memory.ts --runs ${RUNS}`, load, " (after `npm run build`)"),
    "Each measurement spawns `node dist/cli/main.js mcp --root WS --state-dir STATE --yes` under the MCP SDK client (stdio), calls tools/list, reads the server's VmHWM (idle peak), makes the calls, and reads VmHWM again: the peak RSS of the server process over its whole life. Child processes (`yes`, `head`) are not counted; latch's capture of their output is.",
    "Files: 64-byte numbered lines, generated in a temp dir and deleted after. read_file_range asks for the last three lines; edit_file replaces a line that occurs once, at the end, after a two-line read_file_range (which records the range read the edit needs).",
    "",
    ...table,
    "",
    ...growth,
    "",
    `Target: flat in the file size and the output size. The idle peak (${mb(Math.min(...rows.flatMap((r) => r.idle)))}–${mb(Math.max(...rows.flatMap((r) => r.idle)))} MiB: node, the MCP SDK, SQLite, the tool registry) is the floor; what a call adds is \`peak − idle\`, and what matters is that it does not grow with the size.`,
    "- read_file_range streams the file in 1 MiB chunks, keeping only the requested lines and hashing the rest for the ledger (src/fs/read-lines.ts).",
    "- edit_file streams files over 8 MiB (src/edit/mutate-stream.ts): a first pass hashes the file for the read-before-write check and counts the needle, a second writes the edited stream to a temp file that is renamed over the file. Smaller files are edited in memory (the closest-lines hint on no match needs the text). Before it (commit 6b6514c, the same files, one read_file_range and one edit_file through the library with test/helpers/edit-rss.mjs), edit_file held the file several times over (bytes, text, result): peak RSS 119 MiB for a 10 MiB file and 376 MiB for a 100 MiB one, 2.9 bytes per byte of file; the same helper on the streamed path: 76 MiB for both.",
    "- local_shell keeps the head and tail of each stream (`_max_output_bytes`) and counts the rest while the pipe drains. What it adds over idle (about 40 MiB at both sizes) is garbage, not kept output: every pipe read is a fresh 64 KiB buffer, and V8 collects them in batches (in-process, after a 1 GB run: RSS 85 MiB against a peak of 107 MiB, 13 MiB of buffers still awaiting collection).",
    "- Not flat: an approval preview. When an edit needs approval (envelopes `default`, `strict`, `ask_always`), the diff for the approver is built from the whole file's bytes and text, so its memory grows with the file; under `auto_edit` (the default) writes need no approval and no preview is built.",
  ].join("\n");
  publish("memory", "Memory: peak RSS against file and output size", section);
}

await main();
