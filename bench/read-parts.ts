// A read's own part of its thread time, alone: readLineWindow (src/fs/read-lines.ts: the file opened
// through its folder, read, hashed and its window kept), the whole file as read_file asks for it, on
// the read bench's 4 KB file, a 16 KB source file and a 1.8 MB one. The read round trip over MCP
// (bench/mcp.ts) swings by more than this part, so it is timed by itself.
// Usage: node --import tsx bench/read-parts.ts [--base DIR [--label NAME]]   (DIR: another checkout,
// e.g. a `git archive` of the commit before, named NAME in the table; the trees take turns)
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { baseCheckout, measuredLine, median, publish, REPO, thisTree, watchLoad } from "./report.js";

type Target = { input: string; abs: string; rel: string; exists: boolean };
type ReadWindow = (target: Target, req: { start: number; maxOutputBytes: number }) => Promise<unknown>;
const ROUNDS = 9;
const CALLS = 4000;
/** read_file's default output budget (local_fs _max_output_bytes), and one the 1.8 MB file fits in. */
const BUDGETS = [32 * 1024, 4 * 1024 * 1024];

async function timeUs(fn: () => Promise<unknown>, calls: number): Promise<number> {
  for (let i = 0; i < calls / 4; i++) await fn(); // warm-up: optimised code, as in a long-running server
  const t = performance.now();
  for (let i = 0; i < calls; i++) await fn();
  return ((performance.now() - t) * 1000) / calls;
}

async function main(): Promise<void> {
  const load = watchLoad();
  const { base, label, flags } = baseCheckout();
  const load_ = async (repo: string) =>
    ((await import(pathToFileURL(path.join(repo, "src/fs/read-lines.ts")).href)) as { readLineWindow: ReadWindow })
      .readLineWindow;
  const trees: [string, ReadWindow][] = [[thisTree(), await load_(REPO)]];
  if (base) trees.unshift([`${label} (before)`, await load_(base)]);
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-read-parts-")));
  const files: [string, string, Buffer, number][] = [
    ["the read bench's file, 256 lines", "four-kb.txt", Buffer.from("0123456789abcde\n".repeat(256)), CALLS],
    ["src/host/pipeline.ts", "pipeline.ts", readFileSync(path.join(REPO, "src/host/pipeline.ts")), CALLS],
    [
      "typescript's lib.dom.d.ts",
      "lib.dom.d.ts",
      readFileSync(path.join(REPO, "node_modules/typescript/lib/lib.dom.d.ts")),
      CALLS / 100,
    ],
  ];
  const rows: string[] = [];
  try {
    for (const [what, name, bytes, calls] of files) {
      const abs = path.join(dir, name);
      writeFileSync(abs, bytes);
      const target = { input: name, abs, rel: name, exists: true };
      const size = `${(bytes.length / 1024).toFixed(bytes.length < 10240 ? 1 : 0)} KB`;
      for (const budget of bytes.length > BUDGETS[0] ? BUDGETS : BUDGETS.slice(0, 1)) {
        const times = new Map<string, number[]>(trees.map(([t]) => [t, []]));
        for (let r = 0; r < ROUNDS; r++)
          for (const [t, fn] of trees)
            times.get(t)!.push(await timeUs(() => fn(target, { start: 1, maxOutputBytes: budget }), calls));
        for (const [t, xs] of times)
          rows.push(`| ${what} (${size}) | ${budget / 1024} KB | ${t} | ${median(xs).toFixed(1)} |`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  load.stop();
  publish(
    "read-parts",
    "A read's window, alone (issue 32, point 2)",
    [
      measuredLine(`node --import tsx bench/read-parts.ts${flags}`, load),
      "",
      `readLineWindow of the whole file, as read_file asks for it: median of ${ROUNDS} rounds of ${CALLS} calls each (${CALLS / 100} for lib.dom.d.ts), after a warm-up, in one process; the trees take turns. The output budget is read_file's default (32 KB; the 1.8 MB file is then cut there, and only counted on) and, for the large file, one it fits in.`,
      "",
      "| file | output budget | tree | µs per call |",
      "|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
}

await main();
