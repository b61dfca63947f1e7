// Steps 3–5 before approval: the envelope's decision, the policy programs' answers and the posture,
// combined. Deny beats approve beats allow; an abstention defers.
import { strictest, type Decision } from "./decision.js";
import type { Effect } from "./effect.js";
import { evaluateEnvelope, type SandboxState } from "./envelope-eval.js";
import type { Envelope } from "./envelope.js";
import { combinePrograms, runProgram, type PolicyProgram, type Posture } from "./programs.js";

export interface PolicySetup {
  envelope: Envelope;
  programs: PolicyProgram[];
  posture: Posture;
}

export { strictest };

/** The envelope gate, then every program, then the posture when all abstain; returns the trail. */
export async function policyGates(
  setup: PolicySetup,
  q: {
    tool: string;
    args: unknown;
    /** What the call will touch (effect.ts): every gate reads this, not the plan. */
    effect: Effect;
    session: string;
    root: string;
    sandbox?: SandboxState;
  },
): Promise<Decision[]> {
  const env = evaluateEnvelope(setup.envelope, { tool: q.tool, effect: q.effect, root: q.root, sandbox: q.sandbox });
  const trail: Decision[] = [env];
  if (setup.programs.length === 0) return trail;
  // What docs/policy.md promises a program: the axis, the root-relative paths, the commands.
  const { axis, reads, writes, walks, shell, attached } = q.effect;
  const effect = {
    axis,
    ...(attached ? { attached } : {}),
    paths: [...reads, ...writes, ...walks].map((p) => p.rel ?? p.abs),
    ...(shell
      ? { commands: shell.commands.map((c) => c.argv), ...(shell.raw !== undefined ? { raw: shell.raw } : {}) }
      : {}),
    envelope: { name: setup.envelope.name, action: env.action, reason: env.reason },
  };
  const answers = await Promise.all(
    setup.programs.map((p) => runProgram(p, { effect, tool: q.tool, request: q.args, session: q.session })),
  );
  for (const item of answers) trail.push(item);
  if (answers.every((a) => a.action === "abstain")) trail.push(combinePrograms(answers, setup.posture));
  return trail;
}
