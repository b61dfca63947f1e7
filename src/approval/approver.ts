// The Approver interface (step 5): how a call that the envelope or a program sends to "approve" gets a
// person's answer. Transports bring their own (MCP elicitation); the CLI uses a prompt, --yes or the
// queue. No approver, a timeout or a failure is a deny.
import type { ApprovalScope } from "./risk.js";

export interface ApprovalRequest {
  /** Stable within the run; the queue shows it to `latch approvals`. */
  id: string;
  tool: string;
  args: unknown;
  session: string;
  /** Why approval is needed: the deciding gate's reason. */
  reason: string;
  /**
   * The unified diff of the exact mutation, for write tools when it could be built. When diffNote says
   * control characters are shown escaped, readDiff (visible.ts) gives the exact diff back.
   */
  diff?: string;
  /** Why there is no diff, or that it was cut, or that hidden characters in it are shown escaped. */
  diffNote?: string;
  /** The sha256 of each file's content the diff was made from (null: a new file); the write lands only on it. */
  contentSha256?: Record<string, string | null>;
  /**
   * Both sides of a one-file mutation as text, for approvers that draw the diff themselves (an ACP
   * editor, in its own UI rather than a terminal, so the text is not escaped).
   */
  change?: { path: string; before: string | null; after: string };
  /** How long the approver may take, in milliseconds. */
  timeoutMs: number;
  /** What is at stake (writes files, deletes recursively, outside the workspace, network, privilege). */
  risk?: string[];
  /** What "allow for this session" would cover; absent where only a one-time answer is offered. */
  scope?: ApprovalScope;
}

export interface ApprovalAnswer {
  approved: boolean;
  /** Who answered and how ("--yes", "terminal prompt", "latch approvals", an MCP client …). */
  by: string;
  reason?: string;
  /** An approval for this call only (the default), or for the rest of the session within request.scope. */
  scope?: "once" | "session";
}

export interface Approver {
  readonly name: string;
  /** Ask; resolve with the answer. A rejection or an abort is treated as a deny by the host. */
  request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** The default where there is no approver: a refusal telling the model that a person must approve. */
export const denyApprover: Approver = {
  name: "deny",
  async request() {
    return {
      approved: false,
      by: "no approver",
      reason: "a person must approve this call, and no approver is available here",
    };
  },
};

/** `--yes`: approve every call; the policy log records that it was approved this way. */
export const yesApprover: Approver = {
  name: "yes",
  async request() {
    return { approved: true, by: "--yes (approve all)" };
  },
};

/** Ask several approvers at once; the first answer wins (a terminal prompt and the queue, say). */
export function firstAnswer(approvers: Approver[]): Approver {
  return {
    name: approvers.map((a) => a.name).join("+"),
    request(req, signal) {
      const ctl = new AbortController();
      const onAbort = () => ctl.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const asks = approvers.map((a) => a.request(req, ctl.signal));
      return Promise.race(asks).finally(() => {
        ctl.abort();
        signal.removeEventListener("abort", onAbort);
        for (const p of asks) p.catch(() => {}); // the losers' aborts are expected
      });
    },
  };
}
