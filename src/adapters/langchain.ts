// latch's tools for LangChain.js (v1): `import { latchTools, latchMiddleware, rejectDecision } from
// "latch/langchain"`. Each tool is a structured tool over latch's JSON Schema, answering
// content_and_artifact: the model reads the content (the result, or latch's refusal), the ToolMessage's
// artifact holds the whole CallResult with its display data. latchMiddleware() is LangChain's
// human-in-the-loop middleware whose `when` prepares each call (so only what latch sends to a person
// interrupts) and whose description is the exact diff; resuming with an approve decision binds the run
// to those bytes; rejectDecision() rejects through latch (logged, latch's reason to the model).
import { tool, type DynamicStructuredTool, type ToolRunnableConfig } from "@langchain/core/tools";
import { humanInTheLoopMiddleware, type RejectDecision } from "langchain";
import type { Host } from "../host/create-host.js";
import type { CallResult } from "../host/types.js";
import {
  LatchCalls,
  latchApprovals,
  modelText,
  remember,
  type LatchToolsOptions,
  type PendingApproval,
} from "./calls.js";

export { latchApprovals, type LatchToolsOptions, type PendingApproval } from "./calls.js";

export function latchTools(host: Host, opts: LatchToolsOptions = {}): DynamicStructuredTool[] {
  const calls = new LatchCalls(host, opts, "the person, in LangChain's human-in-the-loop step");
  const set = calls.describe().map(
    (t) =>
      tool(
        async (input: unknown, config?: ToolRunnableConfig): Promise<[string, CallResult]> => {
          const r = await calls.run(config?.toolCall?.id ?? "", t.name, input, config?.signal);
          return [modelText(r), r];
        },
        {
          name: t.name,
          description: t.description,
          schema: t.parameters,
          responseFormat: "content_and_artifact",
        },
      ) as DynamicStructuredTool,
  );
  return remember(set, calls);
}

/** LangChain's human-in-the-loop middleware, asking exactly when latch sends a call to a person. */
export function latchMiddleware(tools: DynamicStructuredTool[]): ReturnType<typeof humanInTheLoopMiddleware> {
  const calls = latchApprovals(tools);
  const interruptOn = Object.fromEntries(
    tools.map((t) => [
      t.name,
      {
        allowedDecisions: ["approve", "reject"] as ("approve" | "reject")[],
        // No id, nothing to carry the answer: no interrupt, and the host's approver decides in the call.
        when: ({ toolCall }: { toolCall: { id?: string; args: unknown } }) =>
          toolCall.id === undefined ? false : calls.needsApproval(toolCall.id, t.name, toolCall.args),
        description: (toolCall: { id?: string }) => describe(toolCall.id ? calls.pending(toolCall.id) : undefined),
      },
    ]),
  );
  return humanInTheLoopMiddleware({ interruptOn });
}

/** A reject decision for the resume, through latch: the deny is logged and its reason is what the model reads. */
export async function rejectDecision(
  tools: DynamicStructuredTool[],
  toolCallId: string,
  reason?: string,
): Promise<RejectDecision> {
  return { type: "reject", message: modelText(await latchApprovals(tools).deny(toolCallId, reason)) };
}

/** What the person reads in the interrupt: why, and the exact change. */
function describe(p: PendingApproval | undefined): string {
  if (!p) return "latch: this call needs approval";
  return [`latch: ${p.reason}`, p.diff ?? p.diffNote ?? "", p.risk?.length ? `at stake: ${p.risk.join(", ")}` : ""]
    .filter((l) => l !== "")
    .join("\n");
}
