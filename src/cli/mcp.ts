// latch mcp: serve the tools to an MCP client over stdio (default) or streamable HTTP (--http).
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { yesApprover } from "../approval/approver.js";
import { ConfigError } from "../config/load.js";
import { postureFromEnv } from "../policy/programs.js";
import { approvalWaitFromEnv } from "../transports/mcp/server.js";
import { serveStdio } from "../transports/mcp/stdio.js";
import { addHostFlags, hostFromFlags, UsageError, type HostFlags } from "./options.js";

interface McpFlags extends HostFlags {
  yes?: boolean;
  http?: boolean;
  host: string;
  port: string;
  allowRemote?: boolean;
  approvalWait?: string;
}

export function registerMcp(program: Command): void {
  addHostFlags(program.command("mcp"))
    .description("serve latch's tools over MCP (stdio by default, streamable HTTP with --http)")
    .option("--yes", "approve every call that needs approval, without asking (logged as approved by --yes)")
    .option("--http", "serve streamable HTTP instead of stdio")
    .option("--host <addr>", "address to bind with --http", "127.0.0.1")
    .option("--port <n>", "port with --http (0 picks a free one)", "7077")
    .option("--allow-remote", "allow --host to be a non-loopback address")
    .option(
      "--approval-wait <seconds>",
      "when the client cannot ask a person (or answers cancel), how long a call waits for `latch approvals` from a terminal; 0 refuses at once (default: LATCH_APPROVAL_WAIT, else 60)",
    )
    .action(async (flags: McpFlags) => {
      // With no --default-authorization, LATCH_DEFAULT_AUTHORIZATION (else allow-unless-forbidden);
      // a bad value stops startup. --yes approves for everyone; otherwise MCP elicitation, else deny.
      let defaultPosture;
      try {
        defaultPosture = postureFromEnv(process.env);
      } catch (err) {
        throw new UsageError(`${(err as Error).message}.`);
      }
      // The sessions read it from the environment (stdio's session options are not ours to extend).
      if (flags.approvalWait !== undefined) process.env.LATCH_APPROVAL_WAIT = flags.approvalWait;
      try {
        approvalWaitFromEnv();
      } catch (err) {
        throw new UsageError(`${(err as Error).message}.`);
      }
      const extra = { defaultPosture, ...(flags.yes ? { approver: yesApprover } : {}) };
      const approveAll = flags.yes === true;
      if (!flags.http) {
        await serveStdio({
          makeHost: (root) => hostFromFlags({ ...flags, root: root ?? flags.root }, extra),
          explicitRoot: flags.root !== undefined,
          approveAll,
        });
        return;
      }
      // Loaded only here: the HTTP transport's modules cost stdio's cold start ~30 ms otherwise.
      const { serveHttp, isLoopback, newToken } = await import("../transports/mcp/http.js");
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`Expected \`--port\` to be a whole number from 0 to 65535, got \`${flags.port}\`.`);
      if (!isLoopback(flags.host) && !flags.allowRemote) {
        throw new UsageError(
          `--host ${flags.host} is not a loopback address; anyone who can reach it could use this machine's files. Add --allow-remote if you mean it.`,
        );
      }
      const host = await hostFromFlags(flags, extra);
      const token = process.env.LATCH_TOKEN || newToken();
      const tokenFile = path.join(host.state.dir, "http-token");
      writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
      let handle;
      try {
        handle = await serveHttp({ host, bind: flags.host, port, token, approveAll });
      } catch (err) {
        if ((err as { code?: string }).code === "EADDRINUSE")
          throw new ConfigError(`Port ${port} is in use. Pick another with --port, or --port 0 for any free one.`);
        throw err;
      }
      process.stdout.write(banner(handle.url, token, tokenFile, host.root));
      const stop = () => {
        void handle.close().finally(() => {
          host.close();
          process.exit(0);
        });
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}

function banner(url: string, token: string, tokenFile: string, root: string): string {
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "main.js");
  const stdio = { mcpServers: { latch: { command: process.execPath, args: [cli, "mcp", "--root", root] } } };
  const http = { mcpServers: { latch: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } };
  return [
    `latch is serving ${root}`,
    `  MCP endpoint: ${url}`,
    `  token:        ${token}  (also in ${tokenFile}, mode 0600; set LATCH_TOKEN to choose it)`,
    "",
    "Paste one of these into your MCP client's config:",
    "  over HTTP (this server):",
    indent(JSON.stringify(http, null, 2)),
    "  over stdio (the client starts latch itself):",
    indent(JSON.stringify(stdio, null, 2)),
    "",
    "Ctrl-C stops the server.",
    "",
  ].join("\n");
}

function indent(s: string): string {
  return s
    .split("\n")
    .map((l) => "    " + l)
    .join("\n");
}
