// latch explain TOOL [JSON_ARGS]: steps 1–5 of the call path, without approvers and without running
// anything; prints the decision and every gate's verdict.
import type { Command } from "commander";
import { addHostFlags, hostFromFlags, printJson, readJsonArgs, type HostFlags } from "./options.js";

export function registerExplain(program: Command): void {
  addHostFlags(program.command("explain"))
    .description("show what latch would decide for a call, and why, without running it")
    .argument("<tool>", "tool name or alias")
    .argument("[json_args]", "the arguments as a JSON object, or - for standard input")
    .option("--session <id>", "ledger session (default: LATCH_SESSION, else `cli`)")
    .action(async (tool: string, json: string | undefined, flags: HostFlags & { session?: string }) => {
      const args = await readJsonArgs(json);
      const host = await hostFromFlags(flags);
      try {
        const ex = await host.explain(tool, args, { session: flags.session ?? process.env.LATCH_SESSION ?? "cli" });
        const gates = ex.gates.map((g) => ({ gate: g.gate, decision: g.action, reason: g.reason }));
        printJson({
          decision: ex.decision,
          reason: ex.reason,
          gates,
          // for local_shell and run_tool: contained or not, the mode, network or not
          sandbox: ex.sandbox ?? null,
          // what the call would touch, as every gate read it (src/policy/effect.ts)
          effect: ex.effect ?? null,
          plan: ex.plan ?? null,
          // what its result would pass before anyone sees it (issue 29): mode, known secrets by name, rules
          disclosure: ex.disclosure ?? null,
          parse: ex.plan && "parse" in ex.plan ? ex.plan.parse : null,
        });
      } finally {
        host.close();
      }
    });
}
