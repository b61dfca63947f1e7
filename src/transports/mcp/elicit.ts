// Approvals through MCP elicitation: the client shows the person the tool, the reason and the diff,
// and answers accept/decline. Declined, cancelled, timed out or failed is a refusal (the host's rule).
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Approver } from "../../approval/approver.js";

export function elicitationApprover(server: Server): Approver {
  return {
    name: "mcp-elicitation",
    async request(req, signal) {
      const message = [
        `latch: the model wants to run ${req.tool}, which needs your approval.`,
        `Why: ${req.reason}`,
        req.diff
          ? `\n${req.diff}`
          : req.diffNote
            ? `(${req.diffNote})`
            : `Arguments: ${JSON.stringify(req.args).slice(0, 2000)}`,
      ].join("\n");
      const answer = await server.elicitInput(
        {
          mode: "form",
          message,
          requestedSchema: {
            type: "object",
            properties: {
              approve: {
                type: "boolean",
                title: "Approve this call",
                description: "Check to let it run",
                default: false,
              },
            },
            required: ["approve"],
          },
        },
        { signal, timeout: req.timeoutMs },
      );
      const approved = answer.action === "accept" && answer.content?.approve === true;
      return {
        approved,
        by: "MCP client (elicitation)",
        reason: approved ? undefined : `the person answered ${answer.action === "accept" ? "no" : answer.action}`,
      };
    },
  };
}
