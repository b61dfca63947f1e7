// latch's tools for the Vercel AI SDK (v6): `import { latchTools } from "latch/ai-sdk"`. Each tool takes
// its JSON Schema through jsonSchema(); needsApproval prepares the call (the exact diff waits in
// latchApprovals(tools).pending(toolCallId)); the app answers the tool-approval-request with
// approvalResponse(), which on a no logs the deny and gives the model latch's reason. execute returns
// the whole CallResult (display data included, for the app's UI); toModelOutput sends the model only
// the result, or the refusal's reason.
import { jsonSchema, tool, type JSONValue, type ToolApprovalResponse, type ToolSet } from "ai";
import type { Host } from "../host/create-host.js";
import type { CallResult } from "../host/types.js";
import { LatchCalls, latchApprovals, modelText, remember, type LatchToolsOptions } from "./calls.js";

export { latchApprovals, type LatchToolsOptions, type PendingApproval } from "./calls.js";

export function latchTools(host: Host, opts: LatchToolsOptions = {}): ToolSet {
  const calls = new LatchCalls(host, opts, "the person, in the AI SDK's approval step");
  const set: ToolSet = {};
  for (const t of calls.describe()) {
    set[t.name] = tool<unknown, CallResult>({
      description: t.description,
      inputSchema: jsonSchema(t.parameters),
      needsApproval: (input, { toolCallId }) => calls.needsApproval(toolCallId, t.name, input),
      execute: (input, { toolCallId, abortSignal }) => calls.run(toolCallId, t.name, input, abortSignal),
      toModelOutput: ({ output }) =>
        output.status === "ok" && typeof output.result !== "string"
          ? { type: "json", value: JSON.parse(JSON.stringify(output.result ?? null)) as JSONValue }
          : { type: "text", value: modelText(output) },
    });
  }
  return remember(set, calls);
}

/**
 * The answer to a tool-approval-request, for the next generateText/streamText's messages. A no goes
 * through latch (logged as a deny) and carries latch's reason, which the SDK gives the model.
 */
export async function approvalResponse(
  tools: ToolSet,
  request: { approvalId: string; toolCall: { toolCallId: string } },
  approved: boolean,
  reason?: string,
): Promise<ToolApprovalResponse> {
  const { approvalId } = request;
  if (approved) return { type: "tool-approval-response", approvalId, approved: true };
  const denied = await latchApprovals(tools).deny(request.toolCall.toolCallId, reason);
  return { type: "tool-approval-response", approvalId, approved: false, reason: modelText(denied) };
}
