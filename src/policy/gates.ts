// Steps 3–5 before approval: the envelope's decision, the policy programs' answers and the posture,
// combined. Deny beats approve beats allow; an abstention defers.
import { SEVERITY, strictest, type Decision } from "./decision.js";
import type { Plan, ToolSpec } from "../tools/define.js";
import { evaluateEnvelope, type SandboxState } from "./envelope-eval.js";
import type { Envelope } from "./envelope.js";
import { combinePrograms, runProgram, type PolicyProgram, type Posture } from "./programs.js";
import { shellView } from "./shell-view.js";

export interface PolicySetup {
  envelope: Envelope;
  programs: PolicyProgram[];
  posture: Posture;
}

export { SEVERITY, strictest };

/** The envelope gate, then every program, then the posture when all abstain; returns the trail. */
export async function policyGates(
  setup: PolicySetup,
  q: {
    tool: ToolSpec;
    args: unknown;
    plan: Plan;
    session: string;
    root: string;
    home?: string;
    sandbox?: SandboxState;
  },
): Promise<Decision[]> {
  const env = evaluateEnvelope(setup.envelope, {
    tool: q.tool.name,
    plan: q.plan,
    root: q.root,
    home: q.home,
    axis: q.tool.axis,
    sandbox: q.sandbox,
  });
  const trail: Decision[] = [env];
  if (setup.programs.length === 0) return trail;
  const view = shellView(q.plan);
  const effect = {
    axis: q.tool.axis,
    paths: (q.plan.paths ?? []).map((p) => p.rel),
    ...(view ? { commands: view.commands, ...(view.raw !== undefined ? { raw: view.raw } : {}) } : {}),
    envelope: { name: setup.envelope.name, action: env.action, reason: env.reason },
  };
  const answers = await Promise.all(
    setup.programs.map((p) => runProgram(p, { effect, tool: q.tool.name, request: q.args, session: q.session })),
  );
  trail.push(...answers);
  if (answers.every((a) => a.action === "abstain")) trail.push(combinePrograms(answers, setup.posture));
  return trail;
}
