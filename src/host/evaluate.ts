// Steps 1–5 of the one call path (pipeline.ts runs them first): 1 the registry and the arguments'
// schema → 2 the toolset gate (the tool's plan: paths resolved, limits checked) → 3–4 the envelope,
// the policy programs and the posture → 5 the strictest gate wins. Nothing runs here; explain and
// prepare stop after it.
import { sha256Json } from "../audit/canonical-json.js";
import { Refusal } from "../errors.js";
import { runsLaterByConfig } from "../fs/git-config.js";
import { lastConfigNamed } from "../sandbox/secrets.js";
import { OtherRoot } from "../fs/paths.js";
import { findLoneSurrogate } from "../fs/text.js";
import { effectOf } from "../policy/effect.js";
import { policyGates, strictest } from "../policy/gates.js";
import { toolNamed } from "../registry.js";
import type { Plan, ToolEnv, ToolSpec } from "../tools/define.js";
import { describeArgsError } from "./args.js";
import { checkContainmentRequired } from "./containment.js";
import type { Evaluation, HostContext } from "./context.js";
import { placeholderIn } from "./disclose.js";
import { asError } from "./results.js";
import { makeEnv } from "./tool-env.js";
import type { CallOptions, CallResult, Decision } from "./types.js";

export async function evaluate(
  ctx: HostContext,
  name: string,
  rawArgs: unknown,
  opts: CallOptions,
): Promise<Evaluation> {
  const gates: Decision[] = [];
  // 1. registry
  const tool = toolNamed(ctx.listed, name);
  const notOffered = tool ? undefined : ctx.unlisted?.(name);
  if (notOffered) {
    const done: CallResult = {
      status: "refused",
      reason: notOffered,
      hint: "Nothing ran. Ask the user to review the server's tools (`latch servers check`); do not retry until then.",
      gate: "registry",
    };
    return { done, gates };
  }
  if (!tool || !ctx.listed.includes(tool)) {
    const names = ctx.listed.map((t) => t.name).join(", ");
    const why = tool ? `is not offered here (shape or agent)` : `does not exist`;
    return {
      done: {
        status: "error",
        code: "EUNKNOWNTOOL",
        message: `The tool \`${name}\` ${why}. Available tools: ${names}.`,
      },
      gates,
    };
  }
  const parsed = tool.schema.safeParse(rawArgs ?? {}, { reportInput: true });
  if (!parsed.success)
    return { done: { status: "error", code: "EINVAL", message: describeArgsError(tool, parsed.error) }, gates };
  const odd = findLoneSurrogate(parsed.data);
  if (odd) {
    const message = `\`${odd.at}\` holds a lone UTF-16 surrogate (at character ${odd.index}), which no UTF-8 file, path or command can hold; nothing ran. Send well-formed text (a surrogate pair, or the character itself).`;
    return { done: { status: "error", code: "EINVAL", message }, gates };
  }
  const placeholder = placeholderIn(parsed.data);
  if (placeholder) {
    const done: CallResult = {
      status: "refused",
      reason: `An argument holds \`${placeholder}\`, a placeholder latch put where it withheld a secret; the call would write or send the placeholder, not the secret, so nothing ran.`,
      hint: "Leave that part out, or ask the user to make the change that needs the secret themselves.",
      gate: "disclosure",
    };
    return { done, gates };
  }
  gates.push({ action: "allow", reason: `${tool.name}: arguments match its schema`, gate: "registry" });

  // 2. toolset gate: resolve paths, check limits; a refusal here ends the call
  const planned = await planCall(ctx, tool, parsed.data, opts);
  ctx = planned.ctx;
  const env = planned.env;
  let plan: Plan;
  try {
    plan = await planned.plan;
  } catch (err) {
    if (err instanceof Refusal) {
      const d: Decision = {
        action: "deny",
        reason: err.reason,
        gate: "toolset",
        origin: `tools_policies.${tool.toolset}`,
      };
      gates.push(d);
      const effect = effectOf(tool, {}, { root: ctx.root });
      return { tool, args: parsed.data, ctx, plan: {}, effect, env, gates, final: d, refusal: err };
    }
    return { done: asError(err), gates };
  }
  gates.push({
    action: "allow",
    reason: `tools_policies.${tool.toolset}: within the toolset's limits`,
    gate: "toolset",
    origin: `tools_policies.${tool.toolset}`,
  });

  // 3–4. the envelope, the policy programs, the posture; 5. the strictest wins
  // A file write into what the root's git config names (its hooks folder, a file it includes) runs later too.
  const runsLater =
    tool.axis === "files.write"
      ? [
          ...runsLaterByConfig(
            ctx.root,
            ctx.startupEnv,
            (plan.paths ?? []).map((p) => p.abs),
          ),
          ...lastConfigNamed(ctx.root),
        ]
      : undefined;
  const effect = effectOf(tool, plan, { root: ctx.root, home: ctx.startupEnv.HOME, runsLater });
  const sandbox = env.sandbox;
  const trail = await policyGates(ctx.policy, {
    tool: tool.name,
    args: parsed.data,
    effect,
    session: env.session,
    root: ctx.root,
    sandbox,
  });
  for (const item of trail) gates.push(item);
  return { tool, args: parsed.data, ctx, plan, effect, env, gates, final: strictest(gates), sandbox };
}

/**
 * The toolset gate's plan, in the call's root. With several roots, a call whose first path lies in
 * another root (an absolute path there) is planned again in that root, once; a call that names paths
 * in two roots keeps the OtherRoot refusal (or, where a tool reports paths one by one, that line).
 */
async function planCall(
  ctx: HostContext,
  tool: ToolSpec,
  args: unknown,
  opts: CallOptions,
): Promise<{ ctx: HostContext; env: ToolEnv; plan: Promise<Plan> }> {
  let resolved = 0;
  let elsewhere: string | undefined;
  const env = makeEnv(ctx, opts, tool, (err) => {
    if (err === undefined) resolved++;
    else if (err instanceof OtherRoot && resolved === 0) elsewhere ??= err.root;
  });
  // A write remembers its call (tool and arguments), so a retry of the same call can be told it landed.
  // A read-only tool writes nothing: its call is not hashed.
  const call = tool.annotations.readOnly ? undefined : sha256Json({ tool: tool.name, args });
  env.mutation.call = call;
  const plan = planIn(tool, args, env, ctx);
  await plan.catch(() => undefined); // awaited again by the caller, which reports the failure
  const moved = elsewhere === undefined ? undefined : ctx.rootContext?.(elsewhere);
  if (!moved) return { ctx, env, plan };
  const there = makeEnv(moved, opts, tool);
  there.mutation.call = call;
  return { ctx: moved, env: there, plan: planIn(tool, args, there, moved) };
}

/** The tool's plan; a toolset whose `_containment = "required"` has no sandbox here refuses first. */
async function planIn(tool: ToolSpec, args: unknown, env: ToolEnv, ctx: HostContext): Promise<Plan> {
  checkContainmentRequired(tool, ctx.settings, ctx.probe);
  return tool.plan(args, env);
}
