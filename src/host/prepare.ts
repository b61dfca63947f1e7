// host.prepare (issue 34): steps 1–5 of the one call path without running anything. A call the gates
// send to "approve" gets the request an approver would get (the exact diff, the content's sha256),
// built by the same askApprover() the call uses, and remembered for the answer host.call brings back.
import type { ApprovalRequest, Approver } from "../approval/approver.js";
import { DisclosureScanError } from "../disclose/scanner.js";
import { evaluate } from "./evaluate.js";
import { askAbout, networkGate } from "./approve-step.js";
import type { HostContext } from "./context.js";
import type { Action, CallOptions, Prepared } from "./types.js";

export async function prepareCall(ctx: HostContext, name: string, args: unknown, opts: CallOptions): Promise<Prepared> {
  const out = await prepareRaw(ctx, name, args, opts);
  // The reason leaves latch as a refusal's would: through the disclosure screen (the diff already was,
  // by the approver's screen); a scan that fails withholds it.
  try {
    const { redacted } = await ctx.scanner.scan(out.reason, "reason");
    return { ...out, reason: redacted as string };
  } catch (err) {
    if (!(err instanceof DisclosureScanError)) throw err;
    return { ...out, reason: `(reason withheld: ${err.message})` };
  }
}

async function prepareRaw(ctx: HostContext, name: string, args: unknown, opts: CallOptions): Promise<Prepared> {
  const ev = await evaluate(ctx, name, args, opts);
  if ("done" in ev) {
    const d = ev.done;
    return {
      action: "deny",
      reason: d.status === "error" ? `${d.code}: ${d.message}` : d.status === "refused" ? d.reason : "rejected",
    };
  }
  // The network gate as runCall applies it: names a person must grant make the call ask.
  const { want, final } = networkGate(ctx, ev);
  if (final.action !== "approve") return { action: final.action as Action, reason: final.reason };
  let seen: ApprovalRequest | undefined;
  // Takes the request and answers nothing: the answer comes later, with host.call.
  const look: Approver = {
    name: "prepare",
    request: async (req) => ((seen = req), { approved: false, by: "host.prepare" }),
  };
  const asked = await askAbout(ctx, { ...ev, final }, look, want);
  // A call that fails its own checks (not read first, no match …) is refused without asking anyone.
  if (asked.failed || !seen) return { action: "deny", reason: asked.decision.reason };
  const sha256 = ctx.prepared.remember(seen);
  const { id, diff, diffNote, contentSha256, risk } = seen;
  return {
    action: "approve",
    reason: seen.reason,
    approval: {
      id,
      sha256,
      ...(diff !== undefined ? { diff } : {}),
      ...(diffNote ? { diffNote } : {}),
      ...(contentSha256 ? { contentSha256 } : {}),
      ...(risk ? { risk } : {}),
    },
  };
}
