// Step 5 for a call whose final action is "approve": build the request (with the exact diff for write
// tools), ask the approver, and turn the answer into the approval gate's decision. No approver, a
// timeout, an abort or a failure is a deny.
import type { Decision } from "../policy/decision.js";
import type { Effect } from "../policy/effect.js";
import type { Plan, ToolEnv, ToolSpec } from "../tools/define.js";
import { Refusal, ToolError } from "../errors.js";
import type { ApprovalRequest, Approver } from "./approver.js";
import { bindApproved, prepareApproval, type Prepared } from "./bind.js";
import { visibleDiff, visibleText } from "./visible.js";
import { describeRisk } from "./risk.js";

let nextId = 0;

export async function askApprover(
  approver: Approver,
  base: { tool: ToolSpec; args: unknown; plan: Plan; effect: Effect; env: ToolEnv; reason: string; timeoutS: number },
): Promise<{ decision: Decision; request?: ApprovalRequest; failed?: Refusal | ToolError }> {
  // Checks that need no person first: a call that would fail them is refused without asking anyone.
  let prepared: Prepared;
  try {
    prepared = await prepareApproval(base.tool, base.args, base.plan, base.env);
  } catch (err) {
    if (!(err instanceof Refusal || err instanceof ToolError)) throw err;
    const why = err instanceof Refusal ? err.reason : `${err.code}: ${err.message}`;
    return {
      failed: err,
      decision: {
        action: "deny",
        reason: `the call fails its own checks, so nobody was asked: ${why}`,
        gate: "toolset",
      },
    };
  }
  const { diff, diffNote } = prepared;
  const shown = diff === undefined ? undefined : visibleDiff(diff);
  const notes = [
    diffNote,
    shown?.escaped
      ? "control characters in the diff are shown escaped (\\e, \\r, \\x.., \\u....) and its backslashes as \\\\"
      : undefined,
  ]
    .filter((n): n is string => n !== undefined)
    .map(visibleText);
  const shas = Object.entries(prepared.contentSha256);
  const request: ApprovalRequest = {
    id: `${process.pid}-${++nextId}`,
    tool: base.tool.name,
    args: base.args,
    session: base.env.session,
    reason: visibleText(base.reason),
    ...(shown !== undefined ? { diff: shown.text } : {}),
    ...(notes.length ? { diffNote: notes.join("; ") } : {}),
    ...(shas.length ? { contentSha256: prepared.contentSha256 } : {}),
    ...(prepared.change ? { change: prepared.change } : {}),
    timeoutMs: base.timeoutS * 1000,
    ...describeRisk(base.tool.name, base.effect, base.env.root),
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
      // The approval is bound to the bytes it showed: the write lands only on that content (bind.ts).
      try {
        bindApproved(base.plan, prepared);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        return { request, failed: err, decision: { action: "deny", reason: err.reason, gate: "approval", origin } };
      }
      const bytes = shas.length
        ? `; for the content ${shas.map(([rel, sha]) => `${rel} ${sha === null ? "(new)" : `sha256:${sha}`}`).join(", ")}`
        : "";
      const reason = `approved by ${answer.by}${scope}${bytes}`;
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
