// latch's tools for the OpenAI Agents SDK (@openai/agents-core, re-exported by @openai/agents):
// `import { latchTools, rejectCall } from "latch/openai-agents"`. Each is a function tool with latch's
// JSON Schema (strict: false). needsApproval prepares the call, so the run stops with an interruption
// whose exact diff waits in latchApprovals(tools).pending(item.rawItem.callId); state.approve(item)
// then binds the run to those bytes, and rejectCall() rejects through latch (logged, with latch's
// reason as the message the model gets). The model gets text; display data stays in
// latchApprovals(tools).display(callId).
import { tool, type FunctionTool, type RunToolApprovalItem } from "@openai/agents-core";
import type { Host } from "../host/create-host.js";
import { LatchCalls, latchApprovals, modelText, remember, type LatchToolsOptions } from "./calls.js";

export { latchApprovals, type LatchToolsOptions, type PendingApproval } from "./calls.js";

/**
 * The SDK's type for a non-strict JSON Schema says `additionalProperties: true`; latch's schemas say
 * false (unknown keys are refused, by the schema and again by the host), which the SDK passes on as is.
 */
type NonStrictSchema = {
  type: "object";
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties: true;
};

export function latchTools(host: Host, opts: LatchToolsOptions = {}): FunctionTool<unknown, NonStrictSchema, string>[] {
  const calls = new LatchCalls(host, opts, "the person, in the OpenAI Agents SDK's approval step");
  const set = calls.describe().map((t) =>
    tool({
      name: t.name,
      description: t.description,
      parameters: t.parameters as unknown as NonStrictSchema,
      strict: false,
      // Without the call's id nothing could carry the answer to the run: then no SDK approval, and the
      // host's approver decides inside the call (none: a refusal with the reason).
      needsApproval: async (_ctx, input, callId) =>
        callId === undefined ? false : calls.needsApproval(callId, t.name, input),
      execute: async (input, _ctx, details) =>
        modelText(await calls.run(details?.toolCall?.callId ?? "", t.name, input, details?.signal)),
    }),
  );
  return remember(set, calls);
}

/** Reject an interruption through latch: the deny is logged, and the model is told latch's reason. */
export async function rejectCall(
  tools: object,
  state: { reject(item: RunToolApprovalItem, options?: { message?: string }): void },
  item: RunToolApprovalItem,
  reason?: string,
): Promise<void> {
  const callId = "callId" in item.rawItem ? item.rawItem.callId : undefined;
  const denied = callId === undefined ? undefined : await latchApprovals(tools).deny(callId, reason);
  state.reject(item, { message: denied ? modelText(denied) : `Refused: ${reason ?? "the person said no"}` });
}
