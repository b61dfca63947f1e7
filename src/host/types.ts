import type { Approver } from "../approval/approver.js";
import type { Mode } from "../sandbox/types.js";
import type { Plan, Progress } from "../tools/define.js";

export type Action = "allow" | "approve" | "deny";

/** A policy program may also abstain: it then defers to the others and to the posture. */
export type GateAction = Action | "abstain";

/** One gate's verdict, with where it came from. */
export interface Decision {
  action: GateAction;
  reason: string;
  /** A `Gate`, or the name of the rule that decided. */
  gate: string;
  /** The rule or program behind it, e.g. `envelope:auto_edit/files.write.grant` or `program:/path (sha256 …)`. */
  origin?: string;
  /** For a call that runs processes: the sandbox mode this decision grants (envelope-eval.ts). */
  mode?: Mode;
}

export type CallResult =
  | { status: "ok"; result: unknown; display?: Record<string, unknown> }
  | { status: "refused"; reason: string; hint?: string; gate: string }
  | { status: "error"; code: string; message: string };

export interface CallOptions {
  session?: string;
  /** An approver for this call only (an MCP client's elicitation); wins over the host's. */
  approver?: Approver;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export interface Explanation {
  tool: string;
  decision: Action;
  reason: string;
  gates: Decision[];
  plan?: Plan;
  /** For a tool that starts processes: would it run contained, in which mode, with network? */
  sandbox?: { contained: boolean; mode?: Mode; network: boolean };
}
