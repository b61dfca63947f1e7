// list_dir paging of one 50,000-entry folder end to end over MCP stdio: the older build pages by
// offset (each page re-walks and re-resolves everything before it), this tree by cursor (entries up
// to the cursor are skipped before any per-entry work). Reports total seconds and the first and last
// page's time, in one run; then, per build, the median of 5 single pages at offset 0 and at offset
// 49,500 (a page far into the folder by offset alone, as a client that never passes the cursor asks).
// Usage: npm run build && node --import tsx bench/list-paging.ts --before OLD/dist/cli/main.js [--no-write]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { measuredLine, publish, REPO, watchLoad, noiseNote, thisTree } from "./report.js";

const ENTRIES = 50_000;
const AFTER = path.join(REPO, "dist/cli/main.js");
const bi = process.argv.indexOf("--before");
const BEFORE = bi > 0 ? path.resolve(process.argv[bi + 1]) : undefined;

const base = mkdtempSync(path.join(os.tmpdir(), "latch-list-paging-"));
const root = path.join(base, "ws");
mkdirSync(path.join(root, "big"), { recursive: true });
for (let i = 0; i < ENTRIES; i++) writeFileSync(path.join(root, "big", `f${String(i).padStart(5, "0")}`), "");

interface Row {
  label: string;
  pages: number;
  entries: number;
  totalS: number;
  firstMs: number;
  lastMs: number;
  offset0Ms: number;
  offsetFarMs: number;
}

const FAR = 49_500;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];

async function run(label: string, cli: string, byCursor: boolean): Promise<Row> {
  const client = new Client({ name: "list-paging", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, "mcp", "--root", root, "--state-dir", path.join(base, `state-${label.split(" ")[0]}`)],
      stderr: "ignore",
    }),
  );
  const times: number[] = [];
  const near: number[] = [];
  const far: number[] = [];
  let entries = 0;
  let offset = 0;
  let cursor: string | undefined;
  const t0 = performance.now();
  try {
    for (;;) {
      const args: Record<string, unknown> = { path: "big" };
      if (byCursor && cursor) args.cursor = cursor;
      if (!byCursor) args.offset = offset;
      const a = performance.now();
      const out = (await client.callTool({ name: "list_dir", arguments: args }, undefined, { timeout: 600_000 })) as {
        content: { text: string }[];
      };
      times.push(performance.now() - a);
      const head = JSON.parse(out.content[0].text.split("\n")[0]) as {
        count: number;
        next_offset?: number;
        next_cursor?: string;
      };
      entries += head.count;
      if (byCursor ? head.next_cursor === undefined : head.next_offset === undefined) break;
      cursor = head.next_cursor;
      offset = head.next_offset ?? 0;
    }
    for (let k = 0; k < 5; k++)
      for (const [list, off] of [
        [near, 0],
        [far, FAR],
      ] as const) {
        const a = performance.now();
        await client.callTool({ name: "list_dir", arguments: { path: "big", offset: off } }, undefined, {
          timeout: 600_000,
        });
        list.push(performance.now() - a);
      }
  } finally {
    await client.close();
  }
  return {
    label,
    pages: times.length,
    entries,
    totalS: (performance.now() - t0) / 1000,
    firstMs: times[0],
    lastMs: times[times.length - 1],
    offset0Ms: median(near),
    offsetFarMs: median(far),
  };
}

const load = watchLoad();
const rows: Row[] = [];
try {
  if (BEFORE) rows.push(await run("before (offset)", BEFORE, false));
  rows.push(await run(`after (cursor, ${thisTree()})`, AFTER, true));
} finally {
  load.stop();
  rmSync(base, { recursive: true, force: true });
}
publish(
  "list-paging",
  "list_dir paging: one 50,000-entry folder, end to end over MCP stdio",
  [
    measuredLine(
      `node --import tsx bench/list-paging.ts${BEFORE ? " --before OLD/dist/cli/main.js" : ""}`,
      load,
      " (after `npm run build`)",
    ),
    noiseNote(load),
    "",
    "| build | pages | entries | total s | first page ms | last page ms |",
    "|---|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.pages} | ${r.entries} | ${r.totalS.toFixed(1)} | ${r.firstMs.toFixed(0)} | ${r.lastMs.toFixed(0)} |`,
    ),
    "",
    `One page by offset alone, median of 5: at offset 0 and at offset ${FAR.toLocaleString("en")} of ${ENTRIES.toLocaleString("en")}.`,
    "",
    `| build | offset 0 ms | offset ${FAR} ms | ratio |`,
    "|---|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.offset0Ms.toFixed(0)} | ${r.offsetFarMs.toFixed(0)} | ${(r.offsetFarMs / r.offset0Ms).toFixed(1)}× |`,
    ),
  ].join("\n"),
);
