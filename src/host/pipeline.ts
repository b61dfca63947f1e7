// The one call path (DESIGN.md, "One call's path"). Nothing else executes a tool.
//  1 registry → 2 toolset gate (plan) → 3–5 policy hooks, strictest wins → 7 execute → 8 bound, shape.
// Steps 3–6 (envelope, policy programs, approval, log) plug in through `hooks` and this file.
import type { LocalFsSettings, RawPolicies } from "../config/toolsets.js";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { findTool } from "../registry.js";
import type { Plan, ToolEnv, ToolSpec } from "../tools/define.js";
import type { Ledger } from "../workspace/ledger.js";
import { resolvePath } from "../workspace/paths.js";
import type { StateDir } from "../workspace/state.js";
import { describeArgsError } from "./args.js";
import { boundResult } from "./bound.js";
import type { Action, GateAction, CallOptions, CallResult, Decision, Explanation, PolicyHook } from "./types.js";

export interface HostContext {
  root: string;
  fs: LocalFsSettings;
  policies: RawPolicies;
  state: StateDir;
  ledger: Ledger;
  controlPlane: string[];
  listed: ToolSpec[];
  hooks: PolicyHook[];
  startupEnv: Readonly<NodeJS.ProcessEnv>;
  startupPath: readonly string[];
}

const SEVERITY: Record<GateAction, number> = { abstain: -1, allow: 0, approve: 1, deny: 2 };

/** The outcome of steps 1–5: either a finished result (bad input), or a verdict with its trail. */
type Evaluation =
  | { done: CallResult; gates: Decision[] }
  | { tool: ToolSpec; args: unknown; plan: Plan; env: ToolEnv; gates: Decision[]; final: Decision; refusal?: Refusal };

async function evaluate(ctx: HostContext, name: string, rawArgs: unknown, opts: CallOptions): Promise<Evaluation> {
  const gates: Decision[] = [];
  // 1. registry
  const tool = findTool(name);
  if (!tool || !ctx.listed.includes(tool)) {
    const names = ctx.listed.map((t) => t.name).join(", ");
    const why = tool ? `is not offered here (shape or agent)` : `does not exist`;
    return { done: { status: "error", code: "EUNKNOWNTOOL", message: `The tool \`${name}\` ${why}. Available tools: ${names}.` }, gates };
  }
  const parsed = tool.schema.safeParse(rawArgs ?? {}, { reportInput: true });
  if (!parsed.success) return { done: { status: "error", code: "EINVAL", message: describeArgsError(tool, parsed.error) }, gates };
  gates.push({ action: "allow", reason: `${tool.name}: arguments match its schema`, gate: "registry" });

  // 2. toolset gate: resolve paths, check limits; a refusal here ends the call
  const env = makeEnv(ctx, opts);
  let plan: Plan;
  try {
    plan = await tool.plan(parsed.data, env);
  } catch (err) {
    if (err instanceof Refusal) {
      const d: Decision = { action: "deny", reason: err.reason, gate: "toolset" };
      gates.push(d);
      return { tool, args: parsed.data, plan: {}, env, gates, final: d, refusal: err };
    }
    return { done: asError(err), gates };
  }
  gates.push({ action: "allow", reason: `tools_policies.${tool.toolset}: within the toolset's limits`, gate: "toolset" });

  // 3–5. policy hooks; the strictest decision wins
  let final: Decision = gates[gates.length - 1];
  for (const hook of ctx.hooks) {
    let d: Decision;
    try {
      d = await hook({ tool: tool.name, args: parsed.data, plan, session: env.session });
    } catch (err) {
      d = { action: "deny", reason: `a policy hook failed, so the call is blocked: ${(err as Error).message}`, gate: "policy" };
    }
    if (!d || !(d.action in SEVERITY) || typeof d.reason !== "string" || d.reason.trim() === "") {
      d = { action: "deny", reason: "a policy hook gave no valid decision, so the call is blocked", gate: "policy" };
    }
    gates.push(d);
    if (SEVERITY[d.action] > SEVERITY[final.action]) final = d;
  }
  return { tool, args: parsed.data, plan, env, gates, final };
}

export async function runCall(ctx: HostContext, name: string, rawArgs: unknown, opts: CallOptions): Promise<CallResult> {
  const ev = await evaluate(ctx, name, rawArgs, opts);
  if ("done" in ev) return ev.done;
  if (ev.refusal) return refused(ev.refusal);
  if (ev.final.action === "deny") {
    return { status: "refused", reason: ev.final.reason, hint: "This is a policy decision: do not retry the same call.", gate: String(ev.final.gate) };
  }
  if (ev.final.action === "approve") {
    // No approver is wired yet: an approval nobody can give is a denial.
    return { status: "refused", reason: `${ev.final.reason}; this call needs a person's approval and no approver is available.`, hint: "Ask the user to approve it, or to run latch with an approver.", gate: "approval" };
  }
  // 7. execute
  if (ev.env.signal.aborted) return { status: "error", code: "ECANCELED", message: "The call was cancelled before it ran." };
  try {
    const out = await ev.tool.run(ev.args, ev.plan, ev.env);
    // 8. bound and shape
    return { status: "ok", result: boundResult(out.result, ctx.fs.maxOutputBytes), ...(out.display ? { display: out.display } : {}) };
  } catch (err) {
    if (err instanceof Refusal) return refused(err);
    return asError(err);
  }
}

export async function explainCall(ctx: HostContext, name: string, rawArgs: unknown, opts: CallOptions): Promise<Explanation> {
  const ev = await evaluate(ctx, name, rawArgs, opts);
  if ("done" in ev) {
    const reason = ev.done.status === "error" ? `${ev.done.code}: ${ev.done.message}` : "rejected";
    return { tool: name, decision: "deny", reason, gates: [...ev.gates, { action: "deny", reason, gate: "registry" }] };
  }
  return { tool: ev.tool.name, decision: ev.final.action as Action, reason: ev.final.reason, gates: ev.gates, plan: ev.plan };
}

function makeEnv(ctx: HostContext, opts: CallOptions): ToolEnv {
  const session = opts.session ?? "default";
  const pathPolicy = { root: ctx.root, controlPlane: ctx.controlPlane, deniedSubstrings: ctx.fs.deniedPathSubstrings };
  return {
    session,
    root: ctx.root,
    fs: ctx.fs,
    policies: ctx.policies,
    resolve: (input, o) => resolvePath(pathPolicy, input, o),
    ledger: ctx.ledger,
    mutation: { root: ctx.root, locksDir: ctx.state.locks, ledger: ctx.ledger, session },
    startupEnv: ctx.startupEnv,
    startupPath: ctx.startupPath,
    signal: opts.signal ?? new AbortController().signal,
    progress: (p) => opts.onProgress?.(p),
  };
}

function refused(r: Refusal): CallResult {
  return { status: "refused", reason: r.reason, ...(r.hint ? { hint: r.hint } : {}), gate: r.gate };
}

function asError(err: unknown): CallResult {
  if (err instanceof ToolError) return { status: "error", code: err.code, message: err.message };
  const code = errnoCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return { status: "error", code: code ?? "EINTERNAL", message: code ? message : `latch failed unexpectedly: ${message}` };
}
