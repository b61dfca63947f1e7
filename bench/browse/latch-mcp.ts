// One long-lived `latch mcp` over stdio, driven by the MCP SDK client, for the browse benchmarks:
// the built CLI (dist/cli/main.js), a generated agents.toml with the caps raised so every match comes
// back, and a private state dir. The engine is chosen as a user would: LATCH_GREP_ENGINE.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { fieldsOf, type ToolResult } from "../../test/helpers/mcp.js";
import { REPO } from "../report.js";

export { REPO };
export const CLI = path.join(REPO, "dist/cli/main.js");

/** Caps high enough that a 1 GB corpus's every match and file fit in one answer. */
export const BENCH_CONFIG = `[tools_policies.local_fs]
_max_grep_matches = "10000000"
_max_find_results = "10000000"
_max_output_bytes = "500000000"
`;

export interface LatchServer {
  client: Client;
  /** The server's process id (for its CPU time in /proc). */
  pid: number;
  /** The mcp command line, as run (with the temp paths). */
  command: string;
  /** The structured result, and the display data the host sent beside it (grep's engine). */
  call(
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ result: Record<string, any>; display?: Record<string, any> }>;
  close(): Promise<void>;
}

/** `cli`: another build's dist/cli/main.js (an A/B against a copy of the tree before a change); `nodeArgs`: such as --cpu-prof. */
export async function startLatch(
  root: string,
  env: Record<string, string> = {},
  opts: { cli?: string; nodeArgs?: string[] } = {},
): Promise<LatchServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "latch-bench-mcp-"));
  const config = path.join(dir, "agents.toml");
  writeFileSync(config, BENCH_CONFIG);
  const args = [
    ...(opts.nodeArgs ?? []),
    opts.cli ?? CLI,
    "mcp",
    "--root",
    root,
    "--state-dir",
    path.join(dir, "state"),
    "--config",
    config,
  ];
  const client = new Client({ name: "latch-bench", version: "1" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: "inherit",
  });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid ?? 0,
    command: `${Object.entries(env)
      .map(([k, v]) => `${k}=${v} `)
      .join("")}node dist/cli/main.js mcp --root ${root} --state-dir TMP/state --config TMP/agents.toml`,
    async call(tool, args) {
      const out = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
      if (out.isError) throw new Error(`${tool}: ${JSON.stringify(out.content).slice(0, 400)}`);
      return {
        result: fieldsOf(out as ToolResult),
        display: out._meta?.["latch/display"] as Record<string, any> | undefined,
      };
    },
    async close() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
