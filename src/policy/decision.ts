// The policy vocabulary, owned by the policy layer (as codex-rs's execpolicy keeps its `Decision` in
// decision.rs: Allow < Prompt < Forbidden, ordered, the strictest of several wins). Here an action is
// allow < approve < deny; a policy program may also abstain; each gate's verdict carries its reason
// and where it came from (a gate of the call path: `Gate` in src/errors.ts, where a Refusal names it).
// src/host/types.ts re-exports these for its callers.
import type { Mode } from "../sandbox/types.js";

export type Action = "allow" | "approve" | "deny";

/** A policy program may also abstain: it then defers to the others and to the posture. */
export type GateAction = Action | "abstain";

/** One gate's verdict, with where it came from. */
export interface Decision {
  action: GateAction;
  reason: string;
  /** A `Gate` (src/errors.ts), or the name of the rule that decided. */
  gate: string;
  /** The rule or program behind it, e.g. `envelope:auto_edit/files.write.grant` or `program:/path (sha256 …)`. */
  origin?: string;
  /** For a call that runs processes: the sandbox mode this decision grants (envelope-eval.ts). */
  mode?: Mode;
  /** A policy program that asked to see the result: it is run again in the disclose phase (issue 29). */
  disclose?: boolean;
}

/** How strict an action is: deny beats approve beats allow. */
const SEVERITY: Record<Action, number> = { allow: 0, approve: 1, deny: 2 };

/** The strictest non-abstaining decision; on a tie the later, more specific gate explains best. */
export function strictest(decisions: Decision[]): Decision {
  let out: Decision | undefined;
  for (const d of decisions) {
    if (d.action === "abstain") continue;
    if (!out || SEVERITY[d.action] >= SEVERITY[out.action as Action]) out = d;
  }
  if (!out) throw new Error("strictest() needs at least one decision that is not an abstention");
  return out;
}
