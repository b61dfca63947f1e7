// Approvals in the client shape: ACP's session/request_permission, with the exact change as ACP diff
// content ({type: "diff", path, oldText, newText}) where there is one, and two options: allow once,
// reject once. A cancelled request (the prompt turn was cancelled) is a deny that says so.
import type { AgentContext, ToolCallContent, ToolKind } from "@agentclientprotocol/sdk";
import type { ApprovalAnswer, Approver } from "../../approval/approver.js";

const ALLOW = "allow-once";
const REJECT = "reject-once";

export function acpApprover(client: AgentContext, sessionId: string): Approver {
  return {
    name: "acp",
    async request(req, signal): Promise<ApprovalAnswer> {
      const content: ToolCallContent[] = req.change
        ? [{ type: "diff", path: req.change.path, oldText: req.change.before, newText: req.change.after }]
        : [{ type: "content", content: { type: "text", text: describe(req.reason, req.risk, req.diff) } }];
      const r = await client.request(
        "session/request_permission",
        {
          sessionId,
          toolCall: {
            toolCallId: `latch-${req.id}`,
            title: `${req.tool}: ${req.reason}`,
            kind: kindOf(req.tool),
            status: "pending",
            rawInput: req.args,
            content,
          },
          options: [
            { optionId: ALLOW, name: "Allow once", kind: "allow_once" },
            { optionId: REJECT, name: "Reject", kind: "reject_once" },
          ],
        },
        { cancellationSignal: signal },
      );
      if (r.outcome.outcome === "cancelled")
        return { approved: false, by: "the editor", reason: "the request was cancelled before anyone answered" };
      if (r.outcome.optionId === ALLOW) return { approved: true, by: "the editor (allow once)", scope: "once" };
      return { approved: false, by: "the editor", reason: "the person rejected it" };
    },
  };
}

function describe(reason: string, risk: string[] | undefined, diff: string | undefined): string {
  return [reason, risk?.length ? `Risk: ${risk.join(", ")}.` : "", diff ?? ""].filter(Boolean).join("\n\n");
}

function kindOf(tool: string): ToolKind {
  if (tool === "local_shell" || tool === "run_tool") return "execute";
  if (tool.startsWith("read")) return "read";
  return "edit";
}
