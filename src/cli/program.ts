// The latch program: every command's flags, parsed by commander; one file per command beside this one.
// Loaded by main.ts for everything but a bare --version or --help.
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
import { adoptProbe } from "../sandbox/probe.js";
import type { ProbeRun } from "../sandbox/probe-run.js";
import type { EarlyStart } from "../transports/mcp/answer-cache.js";

/**
 * The whole command tree; scripts/bundle.mjs also builds it to take the top-level help at build time.
 * `stdio`: what the entry answered on stdin for `latch mcp` before this program loaded (main.ts).
 */
export function buildProgram(stdio?: EarlyStart): Command {
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
  registerMcp(program, stdio);
  registerConsole(program);
  registerUndo(program);
  return program;
}

/**
 * Runs the command `argv` names; sets the exit code (2 for a usage error, 1 for a failure). `early`:
 * the sandbox probe the entry started before loading this program (main.ts), for the host to use;
 * `stdio`: what the entry read and answered on stdin for `latch mcp` (answer-cache.ts).
 */
export async function runProgram(argv: readonly string[], early?: ProbeRun, stdio?: EarlyStart): Promise<void> {
  if (early) adoptProbe(early);
  try {
    await buildProgram(stdio).parseAsync([...argv]);
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
}
