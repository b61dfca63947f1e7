// latch servers list|check|approve: the attached MCP servers of the config (src/gateway/). `list` says
// which run and what they offer; `check` shows every tool against its pin, with the diff of what
// changed, and fails while anything waits; `approve SERVER` shows the diff, pins what the server sends
// now and logs that a person approved it (a `servers_approved` line in the policy log).
import type { Command } from "commander";
import type { Host } from "../host/create-host.js";
import type { ServerStatus } from "../gateway/gateway.js";
import { addHostFlags, hostFromFlags, printJson, UsageError, type HostFlags } from "./options.js";

async function withServers(flags: HostFlags, run: (host: Host, servers: ServerStatus[]) => Promise<number>) {
  const host = await hostFromFlags(flags);
  try {
    const servers = host.gateway?.status() ?? [];
    if (servers.length === 0) throw new UsageError("The config attaches no server: add an [mcp_servers.NAME] table.");
    process.exitCode = await run(host, servers);
  } finally {
    await host.shutdown("latch servers is done");
  }
}

/** One line per tool that waits: its state and, unless `brief`, the diff a person reviews. */
function waiting(s: ServerStatus, brief: boolean): string[] {
  const out: string[] = [];
  for (const p of s.pins.filter((x) => x.state !== "pinned")) {
    out.push(
      `  ${p.tool}: ${p.state === "new" ? "new, not approved" : p.state === "changed" ? "changed since approved" : "gone from the server"}`,
    );
    if (!brief && p.diff) for (const l of p.diff.trimEnd().split("\n")) out.push(`    ${l}`);
  }
  for (const r of s.refused) out.push(`  ${r.upstream}: refused (${r.reason})`);
  return out;
}

export function registerServers(program: Command): void {
  const servers = program.command("servers").description("the attached MCP servers: list, check pins, approve");
  addHostFlags(servers.command("list"))
    .description("each attached server: running or not, its tools offered and waiting")
    .option("--json", "print JSON")
    .action((flags: HostFlags & { json?: boolean }) =>
      withServers(flags, async (_host, all) => {
        if (flags.json) {
          printJson(all);
          return 0;
        }
        for (const s of all) {
          const offered = s.pins.filter((p) => p.state === "pinned").length;
          const wait = s.pins.length - offered;
          const state =
            s.state === "ready" ? `${offered} tools offered, ${wait} waiting for approval` : `not running: ${s.error}`;
          process.stdout.write(`${s.name} (${s.kind}): ${state}\n`);
        }
        return 0;
      }),
    );
  addHostFlags(servers.command("check"))
    .description("every tool against its pin, with the diff of what changed; exits 1 while anything waits")
    .action((flags: HostFlags) =>
      withServers(flags, async (_host, all) => {
        let code = 0;
        for (const s of all) {
          const lines = s.state === "ready" ? waiting(s, false) : [`  not running: ${s.error}`];
          process.stdout.write(`${s.name}: ${lines.length ? "needs attention" : "every tool as approved"}\n`);
          for (const l of lines) process.stdout.write(`${l}\n`);
          if (lines.length) code = 1;
        }
        return code;
      }),
    );
  addHostFlags(servers.command("approve"))
    .description("show the diff of the server's tools, pin them as they are now, and log the approval")
    .argument("<server>", "the server's name (its [mcp_servers.NAME] table)")
    .action((name: string, flags: HostFlags) =>
      withServers(flags, async (host) => {
        const checks = await host.approveServer(name);
        const changed = checks.filter((c) => c.state !== "pinned");
        for (const c of changed) process.stdout.write(`${c.tool}: ${c.state}\n${c.diff ?? ""}`);
        const pinned = checks.filter((c) => c.state !== "removed").length;
        process.stdout.write(
          `${name}: ${pinned} tools pinned (${changed.length} new, changed or gone); the approval is in the policy log ${host.policyLog}\n`,
        );
        return 0;
      }),
    );
}
