// host.prepare and a later host.call with the answer (issue 34): a caller whose framework has its own
// approval step (an agent SDK's "needs approval?", then a person, then a run) is given the exact
// request an approver would get, and answers later. The answer counts only for the same request: at
// the call the request is built again from the disk, and its hash must be the one prepared, so an
// approval is bound to the bytes the person saw, however long they looked.
import { sha256Json } from "../audit/canonical-json.js";
import type { ApprovalRequest, Approver } from "./approver.js";

/** What the caller hands back to host.call: the prepared id and sha256, and the person's answer. */
export interface GivenApproval {
  id: string;
  sha256: string;
  answer: "approve" | "deny";
  /** Who answered and how, for the policy log ("alice in the review panel"); default: the caller's approval step. */
  by?: string;
  /** The person's reason, for a deny. */
  reason?: string;
}

/** The bytes an approval covers: the call (tool, session, arguments), the diff shown and the content it was made from. */
function requestSha256(req: ApprovalRequest): string {
  const { tool, session, args, diff, diffNote, contentSha256 } = req;
  return sha256Json({ tool, session, args, diff, diffNote, contentSha256 });
}

/** How many prepared approvals a host keeps waiting for their answer; the oldest go first. */
const KEEP = 1000;

/** The approvals a host prepared and not yet used; each is used once. */
export class PreparedApprovals {
  private readonly waiting = new Map<string, string>();

  /** Keep a prepared request; returns the sha256 the answer must carry. */
  remember(req: ApprovalRequest): string {
    const sha = requestSha256(req);
    this.waiting.set(req.id, sha);
    if (this.waiting.size > KEEP) this.waiting.delete(this.waiting.keys().next().value!);
    return sha;
  }

  /** The approver of a call that carries its answer: yes only for the request that was prepared, unchanged. */
  approverFor(given: GivenApproval): Approver {
    return {
      name: "prepared",
      request: async (req) => {
        const by = given.by ?? "the caller's approval step (host.prepare)";
        const kept = this.waiting.get(given.id);
        this.waiting.delete(given.id); // one answer, one call
        if (kept === undefined || kept !== given.sha256)
          return {
            approved: false,
            by,
            reason: `the approval \`${given.id}\` is unknown, used already or not for this sha256; prepare the call again (host.prepare) and ask again`,
          };
        if (requestSha256(req) !== kept)
          return {
            approved: false,
            by,
            reason:
              "the bytes moved since the preview the person approved (the file, or the call, is not what they saw); nothing was written. Prepare again for a fresh diff",
          };
        if (given.answer !== "approve") return { approved: false, by, reason: given.reason ?? "the person said no" };
        return { approved: true, by, scope: "once" };
      },
    };
  }
}
