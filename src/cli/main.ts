#!/usr/bin/env node
// The latch command: parses flags, builds a host, prints. One file per command beside this one.
import { Command, CommanderError } from "commander";
import { ConfigError } from "../config/load.js";
import { LATCH_VERSION } from "../version.js";
import { ToolError } from "../errors.js";
import { registerApprovals } from "./approvals.js";
import { registerCall } from "./call.js";
import { registerConfig } from "./config.js";
import { registerConsole } from "./console.js";
import { registerLog } from "./log.js";
import { registerExplain } from "./explain.js";
import { registerMcp } from "./mcp.js";
import { UsageError } from "./options.js";
import { registerTools } from "./tools.js";
import { registerServers } from "./servers.js";
import { registerUndo } from "./undo.js";

const program = new Command("latch")
  .description("Local filesystem and shell tools for AI agents, under a policy that says why for every call.")
  .version(LATCH_VERSION)
  .exitOverride()
  .showHelpAfterError();

registerCall(program);
registerTools(program);
registerServers(program);
registerExplain(program);
registerConfig(program);
registerLog(program);
registerApprovals(program);
registerMcp(program);
registerConsole(program);
registerUndo(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof UsageError || err instanceof ConfigError || err instanceof ToolError) {
    // ToolError here: a state-dir fault at startup (ESTATE, ENOSPC), named with its path and fix
    process.stderr.write(`latch: ${err instanceof ToolError ? `${err.code}: ` : ""}${err.message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  } else {
    throw err;
  }
}
