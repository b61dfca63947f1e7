// Where a grep's time goes, one layer at a time, on the generated corpus: plain rg; rg with the exact
// argv latch's rg engine uses (--json, the walk flags); the same search through an in-process host
// (host.call); and through a long-running `latch mcp` (MCP SDK client over stdio). Interleaved runs.
//   npm run build && node --import tsx bench/browse/grep-overhead.ts [PATTERN] [--runs N]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { createHost } from "../../src/host/create-host.js";
import { rgArgs } from "../../src/browse/grep-rg.js";
import { median } from "../report.js";
import { NEEDLES, PEER_RG_WALK } from "./corpus.js";
import { startLatch } from "./latch-mcp.js";

const argv = process.argv.slice(2);
const runs = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 7;
const pattern = argv[0] && !argv[0].startsWith("--") ? argv[0] : NEEDLES.literal;
const corpus = "/tmp/latch-bench-corpus";

function run(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(rgPath, args, { cwd: corpus, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", () => undefined);
    child.on("error", reject);
    child.on("close", () => resolve(performance.now() - t0));
  });
}

const state = mkdtempSync(path.join(os.tmpdir(), "latch-bench-overhead-"));
const config = {
  toolsPolicies: { local_fs: { _max_grep_matches: "10000000", _max_output_bytes: "500000000" } },
  agents: {},
};
const host = await createHost({ root: corpus, stateDir: state, config, env: {} });
const mcp = await startLatch(corpus);
const t: Record<string, number[]> = {
  "rg -n": [],
  "rg, latch's argv": [],
  "in-process host.call": [],
  "latch mcp": [],
};
for (let i = 0; i < runs; i++) {
  t["rg -n"].push(await run(["-n", "--no-heading", ...PEER_RG_WALK, "-F", "-e", pattern, "."]));
  t["rg, latch's argv"].push(await run(rgArgs({ pattern, regex: false, caseSensitive: true, context: 0 }, "./")));
  let t0 = performance.now();
  const r = await host.call("grep", { pattern });
  if (r.status !== "ok") throw new Error(JSON.stringify(r).slice(0, 300));
  t["in-process host.call"].push(performance.now() - t0);
  t0 = performance.now();
  await mcp.call("grep", { pattern });
  t["latch mcp"].push(performance.now() - t0);
}
host.close();
await mcp.close();
rmSync(state, { recursive: true, force: true });
const base = median(t["rg -n"]);
console.log(`\`${pattern}\`, median of ${runs} (ms), load ${os.loadavg()[0].toFixed(1)}`);
for (const [k, v] of Object.entries(t))
  console.log(
    `${k.padEnd(22)} ${median(v).toFixed(0).padStart(6)}  ${(median(v) / base).toFixed(2)}×   [${v.map((x) => x.toFixed(0)).join(" ")}]`,
  );
