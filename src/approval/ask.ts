// Step 5 for a call whose final action is "approve": build the request (with the exact diff for write
// tools), ask the approver, and turn the answer into the approval gate's decision. No approver, a
// timeout, an abort or a failure is a deny.
import type { Decision } from "../host/types.js";
import type { Plan, ToolEnv, ToolSpec } from "../tools/define.js";
import type { ApprovalRequest, Approver } from "./approver.js";
import { buildDiff, buildFilesDiff } from "./diff.js";
import { describeRisk } from "./risk.js";

let nextId = 0;

export async function previewDiff(
  tool: ToolSpec,
  args: unknown,
  plan: Plan,
  env: ToolEnv,
): Promise<{ diff?: string; diffNote?: string }> {
  if (!tool.preview) return {};
  const rel = plan.paths?.[0]?.rel ?? "file";
  try {
    const p = await tool.preview(args, plan, env);
    const d = p.files ? buildFilesDiff(p.files) : buildDiff(rel, p.before, p.after);
    return { ...(d.diff !== undefined ? { diff: d.diff } : {}), ...(d.note ? { diffNote: d.note } : {}) };
  } catch (err) {
    // The person is told the content could not be established; the decision itself does not change.
    return { diffNote: `no diff: the current content could not be established safely (${(err as Error).message})` };
  }
}

export async function askApprover(
  approver: Approver,
  base: { tool: ToolSpec; args: unknown; plan: Plan; env: ToolEnv; reason: string; timeoutS: number },
): Promise<{ decision: Decision; request: ApprovalRequest }> {
  const { diff, diffNote } = await previewDiff(base.tool, base.args, base.plan, base.env);
  const request: ApprovalRequest = {
    id: `${process.pid}-${++nextId}`,
    tool: base.tool.name,
    args: base.args,
    session: base.env.session,
    reason: base.reason,
    ...(diff !== undefined ? { diff } : {}),
    ...(diffNote ? { diffNote } : {}),
    timeoutMs: base.timeoutS * 1000,
    ...describeRisk(base.tool, base.plan, base.env.root),
  };
  const ctl = new AbortController();
  const onAbort = () => ctl.abort();
  base.env.signal.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), request.timeoutMs);
  });
  const origin = `approver:${approver.name}`;
  try {
    const answer = await Promise.race([approver.request(request, ctl.signal), timeout]);
    if (answer === "timeout") {
      return {
        request,
        decision: {
          action: "deny",
          reason: `nobody approved within ${base.timeoutS} s (on_timeout = deny)`,
          gate: "approval",
          origin,
        },
      };
    }
    if (answer && answer.approved === true) {
      // The scope goes into the decision's reason, and so into the policy log.
      const scope =
        answer.scope === "session" && request.scope
          ? ` (for this session: ${request.scope.label})`
          : answer.scope === "once"
            ? " (once)"
            : "";
      const reason = `approved by ${answer.by}${scope}`;
      return { request, decision: { action: "allow", reason, gate: "approval", origin } };
    }
    const why = answer?.reason ?? "not approved";
    return {
      request,
      decision: { action: "deny", reason: `${why} (${answer?.by ?? approver.name})`, gate: "approval", origin },
    };
  } catch (err) {
    return {
      request,
      decision: {
        action: "deny",
        reason: `the approval failed, so the call is blocked: ${(err as Error).message}`,
        gate: "approval",
        origin,
      },
    };
  } finally {
    clearTimeout(timer);
    ctl.abort();
    base.env.signal.removeEventListener("abort", onAbort);
  }
}
