// latch call TOOL [JSON_ARGS]: one call through the host, one JSON object on stdout.
// Exit codes: 0 ok, 3 refused, 1 error, 2 usage.
import type { Command } from "commander";
import { denyApprover, firstAnswer, yesApprover, type Approver } from "../approval/approver.js";
import { queueApprover } from "../approval/queue.js";
import type { Host } from "../host/create-host.js";
import { ttyApprover } from "../approval/tty.js";
import { ConfigError } from "../config/load.js";
import { ToolError } from "../errors.js";
import { addHostFlags, hostFromFlags, printJson, readJsonArgs, UsageError, type HostFlags } from "./options.js";

export const EXIT = { ok: 0, refused: 3, error: 1 } as const;

export type CallFlags = HostFlags & { session?: string; yes?: boolean; waitApproval?: boolean };

/**
 * --yes approves all; on a terminal, a y/N prompt (and the queue, so another terminal can answer);
 * --wait-approval waits on the queue alone; otherwise an approval becomes a refusal.
 */
export function chooseApprover(flags: CallFlags, host: Host): Approver {
  if (flags.yes) return yesApprover;
  const label = { workspace: host.workspace, down: () => host.store.down };
  const tell = (id: string) =>
    process.stderr.write(`latch: waiting for approval ${id} (latch approvals approve ${id} | deny ${id})\n`);
  if (process.stdin.isTTY && process.stderr.isTTY)
    return firstAnswer([ttyApprover(process.stdin, process.stderr), queueApprover(host.store.approvals, label)]);
  if (flags.waitApproval) return queueApprover(host.store.approvals, label, tell);
  return denyApprover;
}

export function registerCall(program: Command): void {
  addHostFlags(program.command("call"))
    .description("run one tool call and print its result as JSON")
    .argument("<tool>", "tool name or alias (see `latch tools`)")
    .argument("[json_args]", "the arguments as a JSON object, or - to read them from standard input")
    .option("--session <id>", "ledger session (default: LATCH_SESSION, else `cli`)")
    .option("--yes", "approve every call that needs approval (logged as approved by --yes)")
    .option(
      "--wait-approval",
      "without a terminal: wait for `latch approvals approve ID` from another terminal, up to the envelope's timeout",
    )
    .action(async (tool: string, json: string | undefined, flags: CallFlags) => {
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
        if (err instanceof UsageError) {
          printJson({ status: "error", code: "EUSAGE", message: err.message });
          process.exitCode = 2;
          return;
        }
        if (err instanceof ToolError) {
          // a state-dir fault (ESTATE, ENOSPC): the documented error, naming the path and the fix
          printJson({ status: "error", code: err.code, message: err.message });
          process.exitCode = 1;
          return;
        }
        if (!(err instanceof ConfigError)) throw err;
        printJson({ status: "error", code: "ECONFIG", message: err.message });
        process.exitCode = 1;
        return;
      }
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      try {
        const session = flags.session ?? process.env.LATCH_SESSION ?? "cli";
        const out = await host.call(tool, args, {
          session,
          signal: controller.signal,
          approver: chooseApprover(flags, host),
        });
        printJson(out);
        if (out.status === "ok" && process.stderr.isTTY) showDiff(out.display);
        process.exitCode = EXIT[out.status];
      } finally {
        host.close();
      }
    });
}

/**
 * A write's diff for the person at the terminal, on stderr: stdout stays one JSON object (which
 * carries the same diff under `display`). The host already escaped its hidden characters.
 */
export function showDiff(display: Record<string, unknown> | undefined): void {
  if (typeof display?.diff !== "string") return;
  const note = typeof display.diff_note === "string" ? `latch: ${display.diff_note}\n` : "";
  process.stderr.write(display.diff + note);
}
