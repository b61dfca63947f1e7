// latch console: the approval console and policy-log viewer (src/console/) on a local listener of
// its own. It reads the state dir's approval queue, so it answers for every latch process that uses
// this state dir; `latch mcp --http --console` serves the same page on the MCP listener instead.
import { randomBytes } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { removeConsoleLink, writeConsoleLink } from "../approval/console-link.js";
import { ConfigError } from "../config/load.js";
import { defaultStateDir, openStateDir } from "../fs/state.js";
import { isLoopback } from "../net/local-http.js";
import { openStore, stateUrlOf } from "../store/open.js";
import { UsageError } from "./options.js";

interface ConsoleFlags {
  stateDir?: string;
  state?: string;
  logDir?: string;
  host: string;
  port: string;
  allowRemote?: boolean;
}

export function registerConsole(program: Command): void {
  program
    .command("console")
    .description("serve the approval console: answer waiting calls and read the policy log in a browser")
    .option(
      "--state-dir <dir>",
      "the state dir whose queue and logs to show (default: LATCH_STATE_DIR, else the XDG state dir)",
    )
    .option(
      "--state <url>",
      "a fleet's PostgreSQL (postgres://…): serve every instance's waiting calls (default: LATCH_STATE_URL, else the state dir's queue)",
    )
    .option("--log-dir <dir>", "the --policy-log folder whose run logs to show (default: the state dir's logs/)")
    .option("--host <addr>", "address to bind", "127.0.0.1")
    .option("--port <n>", "port (0 picks a free one)", "7078")
    .option("--allow-remote", "allow --host to be a non-loopback address")
    .action(async (flags: ConsoleFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new UsageError(`Expected \`--port\` to be a whole number from 0 to 65535, got \`${flags.port}\`.`);
      if (!isLoopback(flags.host) && !flags.allowRemote)
        throw new UsageError(
          `--host ${flags.host} is not a loopback address; anyone who can reach it could approve calls. Add --allow-remote if you mean it.`,
        );
      const state = openStateDir(flags.stateDir ?? defaultStateDir());
      const logDir = path.resolve(flags.logDir ?? path.join(state.dir, "logs"));
      const token = process.env.LATCH_TOKEN || randomBytes(32).toString("base64url");
      const store = await openStore(stateUrlOf(flags.state), state);
      let server;
      try {
        // Imported here: node:http and the console's pages are for this command alone (issue 32).
        const { serveConsole } = await import("../console/server.js");
        server = await serveConsole({ store, db: state.db, logDir, token, bind: flags.host, port });
      } catch (err) {
        await store.close();
        if ((err as { code?: string }).code === "EADDRINUSE")
          throw new ConfigError(`Port ${port} is in use. Pick another with --port, or --port 0 for any free one.`);
        throw err;
      }
      const tokenFile = path.join(state.dir, `console-token-${server.port}`);
      writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
      writeConsoleLink(state.dir, server.url);
      const stop = () => {
        removeConsoleLink(state.dir);
        void server
          .close()
          .then(() => store.close())
          .finally(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      process.stdout.write(
        [
          `latch console for ${store.kind === "postgres" ? store.where : state.dir}`,
          `  open: ${server.url}#token=${token}`,
          `  token: in ${tokenFile} (mode 0600; set LATCH_TOKEN to choose it)`,
          "Ctrl-C stops the console.",
          "",
        ].join("\n"),
      );
    });
}
