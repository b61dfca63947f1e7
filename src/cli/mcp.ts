// latch mcp: serve the tools to an MCP client over stdio (default) or streamable HTTP (--http).
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import type { EarlyStart } from "../transports/mcp/answer-cache.js";
import { yesApprover } from "../approval/approver.js";
import { ConfigError } from "../config/load.js";
import { postureFromEnv } from "../policy/programs.js";
import { startRun } from "../host/recover.js";
import { log, reportRecovered } from "../transports/log.js";
import { onStopSignals } from "../transports/stop-signals.js";
import { approvalWaitFromEnv } from "../transports/mcp/approval-wait.js";
import { watchConfig } from "../transports/mcp/watch-config.js";
import { removeConsoleLink, writeConsoleLink } from "../approval/console-link.js";
import { isLogFolder } from "./log-files.js";
import { addHostFlags, hostFromFlags, UsageError, type HostFlags } from "./options.js";

interface McpFlags extends HostFlags {
  yes?: boolean;
  http?: boolean;
  host: string;
  port: string;
  allowRemote?: boolean;
  approvalWait?: string;
  sessionIdle: string;
  maxSessions: string;
  console?: boolean;
  bodyTimeout: string;
}

/** `start`: what the entry read and answered on stdin before the program loaded (answer-cache.ts). */
export function registerMcp(program: Command, start?: EarlyStart): void {
  addHostFlags(program.command("mcp"), "LATCH_DEFAULT_AUTHORIZATION, else allow-unless-forbidden")
    .description("serve latch's tools over MCP (stdio by default, streamable HTTP with --http)")
    .option("--yes", "approve every call that needs approval, without asking (logged as approved by --yes)")
    .option("--http", "serve streamable HTTP instead of stdio")
    .option("--host <addr>", "address to bind with --http", "127.0.0.1")
    .option("--port <n>", "port with --http (0 picks a free one)", "7077")
    .option("--allow-remote", "allow --host to be a non-loopback address")
    .option(
      "--console",
      "with --http: also serve the approval console (`latch console`) at /console/ on the same listener",
    )
    .option("--session-idle <seconds>", "with --http: close a session after this long without a request", "1800")
    .option("--max-sessions <n>", "with --http: at most this many open sessions; more are refused", "256")
    .option(
      "--body-timeout <seconds>",
      "with --http: a request body not complete within this long is refused (408)",
      "30",
    )
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
      if (flags.console && !flags.http)
        throw new UsageError(
          "--console needs --http (one listener for both); over stdio, run `latch console` beside it.",
        );
      if (!flags.http) {
        // Loaded here, as the HTTP transport below: the MCP SDK (its protocol's zod schemas, ~8 ms of a
        // start) is for `latch mcp` alone, not for `latch call`, `tools` or `explain`.
        const { serveStdio } = await import("../transports/mcp/stdio.js");
        await serveStdio({
          // The sandbox probe runs once the client's first messages are answered; serveStdio says
          // what it found.
          makeHost: async () => {
            const h = await hostFromFlags(flags, { ...extra, probeAfterStart: true });
            watchConfig(h);
            return h;
          },
          explicitRoot: flags.root !== undefined,
          approveAll,
          start,
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
      const idle = Number(flags.sessionIdle);
      if (!(idle > 0))
        throw new UsageError(
          `Expected \`--session-idle\` to be a positive number of seconds, got \`${flags.sessionIdle}\`.`,
        );
      const bodyTimeout = Number(flags.bodyTimeout);
      if (!(bodyTimeout > 0))
        throw new UsageError(
          `Expected \`--body-timeout\` to be a positive number of seconds, got \`${flags.bodyTimeout}\`.`,
        );
      const maxSessions = Number(flags.maxSessions);
      if (!Number.isInteger(maxSessions) || maxSessions < 1)
        throw new UsageError(`Expected \`--max-sessions\` to be a whole number from 1, got \`${flags.maxSessions}\`.`);
      const host = await hostFromFlags(flags, extra);
      process.stderr.write(`latch mcp: ${host.containment}\n`);
      watchConfig(host);
      const run = startRun(host.state);
      reportRecovered(run.recovered);
      const token = process.env.LATCH_TOKEN || newToken();
      host.knowSecret("LATCH_TOKEN", token); // the disclosure gate never lets the bearer token out
      let boundPort = port;
      const consoleApp = flags.console
        ? (await import("../console/server.js")).consoleHandler({
            store: host.store,
            db: host.state.db,
            logDir: path.dirname(host.policyLog),
            token,
            bind: flags.host,
            port: () => boundPort,
          })
        : undefined;
      let handle;
      try {
        handle = await serveHttp({
          host,
          bind: flags.host,
          port,
          token,
          approveAll,
          idleMs: idle * 1000,
          maxSessions,
          bodyTimeoutMs: bodyTimeout * 1000,
          ...(consoleApp ? { console: { prefix: "/console", handle: consoleApp.handle } } : {}),
        });
      } catch (err) {
        if ((err as { code?: string }).code === "EADDRINUSE")
          throw new ConfigError(`Port ${port} is in use. Pick another with --port, or --port 0 for any free one.`);
        throw err;
      }
      // Written only once listening, and one per state dir and port: a server that fails to start (a
      // busy port) never overwrites the token of the one that runs.
      boundPort = handle.port;
      const consoleUrl = consoleApp ? handle.url.replace(/\/mcp$/, "/console/") : undefined;
      if (consoleUrl) writeConsoleLink(host.state.dir, consoleUrl);
      const tokenFile = path.join(host.state.dir, `http-token-${handle.port}`);
      writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
      // A signal cancels the running calls (their processes killed, outcomes logged as interrupted). The
      // handlers are in place before the banner: whoever reads it may signal at once.
      const stop = async (sig: string) => {
        const n = await host.shutdown(`${sig} received`);
        run.end();
        if (consoleApp) removeConsoleLink(host.state.dir);
        consoleApp?.close();
        await handle.close().catch(() => undefined); // the process exits either way
        log(n > 0 ? "error" : "info", `${sig} received; ${n} running call(s) cancelled; latch stopped.`);
        process.exit(0);
      };
      onStopSignals((sig) => void stop(sig), host, run);
      // One write: whoever reads the banner gets the console line with it.
      process.stdout.write(
        banner(handle.url, token, tokenFile, host.root, stdioArgs(process.argv, host.root)) +
          (consoleUrl ? `Approval console: ${consoleUrl}#token=${token}\n` : ""),
      );
    });
}

/** Flags that only mean something to this HTTP server: left out of the banner's stdio config. */
const HTTP_ONLY_VALUE = new Set(["--host", "--port", "--session-idle", "--max-sessions", "--body-timeout"]);
const HTTP_ONLY_FLAG = new Set(["--http", "--allow-remote", "--console"]);
/** Flags whose value is a path: made absolute, since the client starts latch from a folder of its own. */
const PATH_VALUE = new Set(["--config", "--state-dir", "--policy", "--policy-log"]);

/** The user's own flags after `mcp` (--envelope strict stays strict), for a stdio config, with an absolute --root. */
function stdioArgs(argv: string[], root: string): string[] {
  const rest = argv.slice(argv.indexOf("mcp") + 1);
  const out: string[] = ["--root", root];
  for (let i = 0; i < rest.length; i++) {
    const [name, inline] = rest[i].startsWith("--") && rest[i].includes("=") ? rest[i].split(/=(.*)/s) : [rest[i]];
    if (HTTP_ONLY_FLAG.has(name)) continue;
    const takesValue = HTTP_ONLY_VALUE.has(name) || PATH_VALUE.has(name) || VALUE_FLAGS.has(name) || name === "--root";
    const value = takesValue ? (inline ?? rest[++i]) : undefined;
    if (HTTP_ONLY_VALUE.has(name) || name === "--root") continue;
    if (value === undefined) out.push(name);
    // A --policy-log FILE is this server's own log: a stdio run gets a new file in its folder instead.
    else if (name === "--policy-log" && !isLogFolder(value)) out.push(name, path.dirname(path.resolve(value)) + "/");
    else out.push(name, PATH_VALUE.has(name) ? path.resolve(value) : value);
  }
  return out;
}
const VALUE_FLAGS = new Set([
  "--state",
  "--agent",
  "--envelope",
  "--default-authorization",
  "--log-sync",
  "--log-retention",
  "--approval-wait",
]);

function banner(url: string, token: string, tokenFile: string, root: string, args: string[]): string {
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "main.js");
  const stdio = { mcpServers: { latch: { command: process.execPath, args: [cli, "mcp", ...args] } } };
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
