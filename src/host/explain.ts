// `latch explain` and host.explain(): steps 1–5 of the call path and what step 5 would do, without an
// approver, without logging and without running anything.
import type { Action, CallOptions, Explanation } from "./types.js";
import { sandboxMode, sandboxRecord } from "./containment.js";
import type { HostContext } from "./context.js";
import { evaluate } from "./evaluate.js";
import { networkGate, wanted } from "./approve-step.js";
import { envelopeDisclosure } from "../policy/disclosure.js";
import { FORMAT_RULES, RULES_VERSION } from "../disclose/rules.js";
import { SECRETLINT_FINDING_IDS, SECRETLINT_VERSION } from "../disclose/secretlint.js";

/** Steps 1–5 without approvers, without logging and without running anything. */
export async function explainCall(
  ctx: HostContext,
  name: string,
  rawArgs: unknown,
  opts: CallOptions,
): Promise<Explanation> {
  const ev = await evaluate(ctx, name, rawArgs, opts);
  if ("done" in ev) {
    const reason = ev.done.status === "error" ? `${ev.done.code}: ${ev.done.message}` : "rejected";
    return { tool: name, decision: "deny", reason, gates: [...ev.gates, { action: "deny", reason, gate: "registry" }] };
  }
  const { want, final } = networkGate(ctx, ev);
  const gates = [...ev.gates];
  if (final.action === "approve") {
    const who = opts.approver ?? ctx.approver;
    gates.push({
      action: "approve",
      reason: who ? `would ask the approver \`${who.name}\`` : "would be refused: no approver is available (deny)",
      gate: "approval",
      origin: `approver:${who?.name ?? "deny"}`,
    });
  }
  const sandbox = ev.sandbox
    ? {
        ...sandboxRecord(ev.sandbox, final.action === "approve" ? "workspace-write" : sandboxMode(gates)),
        ...wanted(want),
      }
    : undefined;
  const rule = envelopeDisclosure(ctx.policy.envelope, ev.tool.name);
  const disclosure = {
    ...rule,
    knownSecrets: ctx.scanner.knownNames(),
    rules: [...new Set([...FORMAT_RULES.map((r) => r.id), ...SECRETLINT_FINDING_IDS])],
    rulesVersion: `${RULES_VERSION} + ${SECRETLINT_VERSION}`,
    programs: gates.filter((g) => g.disclose).map((g) => g.origin ?? String(g.gate)),
  };
  return {
    tool: ev.tool.name,
    decision: final.action as Action,
    reason: final.reason,
    gates,
    plan: ev.plan,
    effect: ev.effect,
    ...(sandbox ? { sandbox } : {}),
    disclosure,
  };
}
