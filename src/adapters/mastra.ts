// latch's tools for Mastra (0.24): `import { latchTools } from "latch/mastra"`. Each is a createTool()
// tool whose input schema is latch's JSON Schema read by zod's own JSON-schema path. Approval is
// Mastra's tool suspension: when latch sends a call to a person, the tool suspends with the request
// (reason, exact diff, sha256; also in latchApprovals(tools).pending(toolCallId)) and the app resumes
// the run with agent.resumeStream({ approved, reason? }, { runId, toolCallId }). A yes runs the call
// bound to the prepared bytes; a no goes through latch (logged) and the model reads latch's reason.
// The result is { content, result }: the model reads `content`; `result` is the whole CallResult.
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import type { Host } from "../host/create-host.js";
import type { CallResult } from "../host/types.js";
import { LatchCalls, modelText, remember, type LatchToolsOptions } from "./calls.js";

export { latchApprovals, type LatchToolsOptions, type PendingApproval } from "./calls.js";

/** What the app sends to agent.resumeStream for a suspended call. */
export interface LatchResume {
  approved: boolean;
  reason?: string;
}

type Output = { content: string; result: CallResult } | undefined;
interface ToolContext {
  context: unknown;
  suspend?: (payload: unknown) => Promise<unknown>;
  resumeData?: unknown;
}
interface ToolOptions {
  toolCallId?: string;
  abortSignal?: AbortSignal;
}

export function latchTools(host: Host, opts: LatchToolsOptions = {}): Record<string, ReturnType<typeof createTool>> {
  const calls = new LatchCalls(host, opts, "the person, in Mastra's tool suspension");
  const shaped = (r: CallResult): Output => ({ content: modelText(r), result: r });
  const set: Record<string, ReturnType<typeof createTool>> = {};
  for (const t of calls.describe()) {
    set[t.name] = createTool({
      id: t.name,
      description: t.description,
      inputSchema: z.fromJSONSchema(t.parameters) as z.ZodObject,
      // Typed here: Mastra's own types name a package it does not ship (@internal/external-types).
      execute: async ({ context, suspend, resumeData }: ToolContext, options?: ToolOptions): Promise<Output> => {
        const callId = options?.toolCallId;
        const resume = resumeData as LatchResume | undefined;
        if (callId !== undefined && resume === undefined && suspend !== undefined) {
          if (await calls.needsApproval(callId, t.name, context)) {
            const p = calls.pending(callId)!;
            await suspend({ reason: p.reason, diff: p.diff, sha256: p.sha256, risk: p.risk });
            return undefined; // the run waits for the person; resumed, this runs again with resumeData
          }
        }
        if (callId !== undefined && resume && resume.approved !== true)
          return shaped(await calls.deny(callId, resume.reason));
        return shaped(await calls.run(callId ?? "", t.name, context, options?.abortSignal));
      },
    });
  }
  return remember(set, calls);
}
