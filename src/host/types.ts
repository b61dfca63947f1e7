import type { Approver } from "../approval/approver.js";
import type { GivenApproval } from "../approval/prepared.js";
import type { Plan, Progress } from "../tools/define.js";

// The policy vocabulary lives in src/policy/decision.ts; re-exported for the host's callers.
export type { Action, Decision, GateAction } from "../policy/decision.js";
import type { Action, Decision } from "../policy/decision.js";
import type { Effect } from "../policy/effect.js";
import type { Mode } from "../sandbox/types.js";
import type { ErrorCode } from "../errors.js";

/** What the disclosure gate did with a result (issue 29): the rules that found something, how often, and the action. */
interface Disclosure {
  action: "allow" | "report" | "redact" | "withhold";
  findings: { rule: string; count: number }[];
  reason?: string;
}

export type CallResult =
  | { status: "ok"; result: unknown; display?: Record<string, unknown>; disclosure?: Disclosure }
  | { status: "refused"; reason: string; hint?: string; gate: string; disclosure?: Disclosure }
  | { status: "error"; code: ErrorCode; message: string; disclosure?: Disclosure };

export interface CallOptions {
  session?: string;
  /** An approver for this call only (an MCP client's elicitation); wins over the host's. */
  approver?: Approver;
  /**
   * The answer to an approval prepared with host.prepare: counts only while the call, its diff and the
   * content it was made from are the bytes prepared; else the call is refused. Wins over `approver`.
   */
  approval?: GivenApproval;
  signal?: AbortSignal;
  /**
   * Beside or instead of `signal`: called once, as the call starts, with the function that cancels it.
   * For a caller that cancels by its own key (MCP's request id): a signal costs it an AbortController
   * per call and the host a listener, ~10% of a read's round trip over stdio (bench/RESULTS.md).
   */
  cancel?: (abort: (reason?: unknown) => void) => void;
  onProgress?: (p: Progress) => void;
  /**
   * The caller sends the answer in the promise chain that ends the call (MCP's transports): a call
   * that only reads then leaves its ledger record and its outcome line to the event loop's next turn,
   * after the answer is out, unless a later call or line needs them first. Off, host.call resolves
   * with both written.
   */
  answerFirst?: boolean;
}

export interface Explanation {
  tool: string;
  decision: Action;
  reason: string;
  gates: Decision[];
  plan?: Plan;
  /** What the call would touch (src/policy/effect.ts), as every gate read it. */
  effect?: Effect;
  /** For a tool that starts processes: would it run contained, in which mode, with network? */
  sandbox?: { contained: boolean; mode?: Mode; network: boolean };
  /** The disclosure rules its result would pass (issue 29): the mode and where it comes from, what is looked for. */
  disclosure?: {
    mode: "allow" | "report" | "redact" | "withhold";
    reason: string;
    origin: string;
    /** The environment names (and the bearer token) whose values are looked for; never the values. */
    knownSecrets: string[];
    rules: string[];
    rulesVersion: string;
    /** Programs that asked to see results (`"disclose": true`) and would answer the disclose phase. */
    programs: string[];
  };
}

/** What host.prepare says of a call, without running it: the decision, and what a person must see to approve it. */
export interface Prepared {
  action: Action;
  reason: string;
  /** When the action is "approve": the request to show, and what host.call must carry back with the answer. */
  approval?: {
    id: string;
    /** What the answer is bound to: the call, its diff and the content the diff was made from. */
    sha256: string;
    /** The unified diff of the exact change (write tools), hidden characters shown escaped. */
    diff?: string;
    diffNote?: string;
    /** The sha256 of each file's content the diff was made from (null: a new file). */
    contentSha256?: Record<string, string | null>;
    /** What is at stake (writes files, deletes, network …). */
    risk?: string[];
  };
}
