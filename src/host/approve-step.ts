// Step 5 of the call path for a verdict of "approve": the network names a contained call wants
// (network.ts) joined to the trail, and the question put to the person through the disclosure screen.
// Shared by the call path, host.prepare and explain, so all three ask and explain alike.
import { askApprover } from "../approval/ask.js";
import type { Approver } from "../approval/approver.js";
import type { ToolSpec } from "../tools/define.js";
import { describeRisk } from "./containment.js";
import type { Evaluation, HostContext } from "./context.js";
import { screenedApprover } from "./disclose.js";
import { askForNetwork, describeWant, networkWant, type NetworkWant } from "./network.js";
import type { CallResult, Decision } from "./types.js";

/** Network by approval (network.ts): names the operator did not pre-grant are asked for (a gate of the trail). */
export function networkGate(
  ctx: HostContext,
  ev: Exclude<Evaluation, { done: CallResult }>,
): { want?: NetworkWant; final: Decision } {
  const where = { root: ev.ctx.root, env: ev.ctx.startupEnv, home: ev.ctx.startupEnv.HOME };
  const want = networkWant(ev.tool, ev.effect, ctx.settings, ev.sandbox, where);
  const ask = want && askForNetwork(ev.final, want);
  if (!ask) return { want, final: ev.final };
  ev.gates.push(ask);
  return {
    want,
    final: ev.final.action === "approve" ? { ...ev.final, reason: `${ev.final.reason}; ${ask.reason}` } : ask,
  };
}

/** The names a call asked for through the proxy, for its decision's sandbox record. */
export function wanted(w: NetworkWant | undefined): { network_wanted?: string[] | "any" } {
  return w ? { network_wanted: w.domains } : {};
}

/** Step 5's question for a call the gates sent to "approve", asked of `approver` through the disclosure screen. */
export function askAbout(
  ctx: HostContext,
  ev: Extract<Evaluation, { tool: ToolSpec }>,
  approver: Approver,
  /** The names a network grant would open (network.ts), told to the person. */
  want?: NetworkWant,
): ReturnType<typeof askApprover> {
  const final = ev.final;
  return askApprover(screenedApprover(approver, ctx.scanner), {
    tool: ev.tool,
    args: ev.args,
    plan: ev.plan,
    effect: ev.effect,
    env: ev.env,
    // The person sees what the call may do if approved: contained or not, writes, network.
    reason: ev.sandbox
      ? `${final.reason}; if approved: ${describeRisk(ev.sandbox, "workspace-write")}${want?.ask ? `, except ${describeWant(want)} through latch's proxy` : ""}`
      : final.reason,
    timeoutS: ctx.policy.envelope.timeout,
  });
}
