// latch call TOOL [JSON_ARGS]: one call through the host, one JSON object on stdout.
// Exit codes: 0 ok, 3 refused, 1 error, 2 usage.
import type { Command } from "commander";
import { ConfigError } from "../config/load.js";
import { addHostFlags, hostFromFlags, printJson, readJsonArgs, UsageError, type HostFlags } from "./options.js";

const EXIT = { ok: 0, refused: 3, error: 1 } as const;

export function registerCall(program: Command): void {
  addHostFlags(program.command("call"))
    .description("run one tool call and print its result as JSON")
    .argument("<tool>", "tool name or alias (see `latch tools`)")
    .argument("[json_args]", "the arguments as a JSON object, or - to read them from standard input")
    .option("--session <id>", "ledger session (default: LATCH_SESSION, else `cli`)")
    .action(async (tool: string, json: string | undefined, flags: HostFlags & { session?: string }) => {
      let args: unknown;
      try {
        args = await readJsonArgs(json);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        printJson({ status: "error", code: "EUSAGE", message: err.message });
        process.exitCode = 2;
        return;
      }
      let host;
      try {
        host = await hostFromFlags(flags);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        printJson({ status: "error", code: "ECONFIG", message: err.message });
        process.exitCode = 1;
        return;
      }
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      try {
        const session = flags.session ?? process.env.LATCH_SESSION ?? "cli";
        const out = await host.call(tool, args, { session, signal: controller.signal });
        printJson(out);
        process.exitCode = EXIT[out.status];
      } finally {
        host.close();
      }
    });
}
