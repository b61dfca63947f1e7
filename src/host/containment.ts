// One call's containment, worked out once by the pipeline: before the decision, whether the call's
// processes run contained and with network (the envelope's tiers, the plan, `required`); after it, with
// the mode the decision chose, the CallContainment every spawn of the call uses (`env.containment`).
// Also the words for the policy log, `latch explain`, approval requests and the start-up line.
import type { Settings } from "../config/settings.js";
import type { Decision } from "../policy/decision.js";
import type { Effect, GitConfigWrite } from "../policy/effect.js";
import type { Envelope } from "../policy/envelope.js";
import type { SandboxState } from "../policy/envelope-eval.js";
import { sandboxDeniedGlobs } from "../policy/visibility.js";
import { callContainment, checkRequired, isContained, type CallContainment } from "../sandbox/call.js";
import type { ContainmentSettings, Mode, ProbeResult } from "../sandbox/types.js";
import type { ToolSpec } from "../tools/define.js";

/** The sandbox settings of a toolset whose tools start processes (local_shell, catalog), else undefined. */
function toolsetContainment(toolset: string, settings: Settings): ContainmentSettings | undefined {
  if (toolset === "local_shell") return settings.local_shell;
  if (toolset === "catalog") return settings.catalog;
  return undefined;
}

/** Does a call of `tool` run contained, with network? Undefined for tools that start no process. */
export function sandboxState(tool: ToolSpec, settings: Settings, probe: ProbeResult): SandboxState | undefined {
  if (tool.axis !== "shell") return undefined;
  const s = toolsetContainment(tool.toolset, settings);
  if (!s) return undefined;
  const contained = isContained(s, probe);
  return { contained, network: s.network || !contained };
}

/** `_containment = "required"` with no working sandbox: the toolset gate refuses, before the tool plans. */
export function checkContainmentRequired(tool: ToolSpec, settings: Settings, probe: ProbeResult): void {
  const s = tool.axis === "shell" ? toolsetContainment(tool.toolset, settings) : undefined;
  if (s) checkRequired(tool.toolset, s, probe);
}

/** The containment every process of an allowed call runs under, built once, before the tool runs. */
export function containmentFor(
  tool: ToolSpec,
  host: {
    settings: Settings;
    probe: ProbeResult;
    root: string;
    controlPlane: readonly string[];
    home?: string;
    /** The session's envelope: the paths it closes to this tool are masked in the box. */
    envelope?: Envelope;
  },
  mode: Mode,
  /** The `.git/config` writes a person approved (approvedConfigWrites): their steps get the file writable. */
  gitConfig: readonly ApprovedConfigWrite[] = [],
): CallContainment | undefined {
  const s = tool.axis === "shell" ? toolsetContainment(tool.toolset, host.settings) : undefined;
  if (!s) return undefined;
  // What the envelope closes to this tool is masked in the box too, as the walks hide it.
  const denied = host.envelope ? sandboxDeniedGlobs(host.envelope, tool.name) : [];
  const gitConfigSteps = gitConfig.map((w) => w.argv);
  return callContainment(s, host.probe, {
    root: host.root,
    mode,
    hidden: host.controlPlane,
    home: host.home,
    denied,
    gitConfigSteps,
  });
}

export interface ApprovedConfigWrite {
  argv: string[];
  write: GitConfigWrite;
}

/**
 * The steps of a call that write `.git/config` (src/shell/programs/git-config.ts), when a person
 * approved the call: only then is the file writable, and only for those steps (a wrapped git, such as
 * `timeout 5 git config …`, is not a step of its own and keeps it read-only).
 */
export function approvedConfigWrites(effect: Effect, gates: readonly Decision[]): ApprovedConfigWrite[] {
  if (!gates.some((g) => g.gate === "approval" && g.action === "allow")) return [];
  const steps = effect.shell?.steps ?? [];
  return (effect.shell?.commands ?? []).flatMap((c) =>
    c.gitConfig && steps.some((s) => s.argv.length === c.argv.length && s.argv.every((w, i) => w === c.argv[i]))
      ? [{ argv: c.argv, write: c.gitConfig }]
      : [],
  );
}

/** What the log, `latch explain` and approval requests say about a call's processes. */
export function sandboxRecord(
  s: SandboxState,
  mode: Mode,
  /** The approved `.git/config` writes: the log records each change a step may make with the file writable. */
  gitConfig: readonly ApprovedConfigWrite[] = [],
): { contained: boolean; mode?: Mode; network: boolean; git_config?: string[] } {
  if (!s.contained) return { contained: false, network: s.network };
  const changes = mode === "workspace-write" ? gitConfig.flatMap((w) => w.write.changes) : [];
  return { contained: true, mode, network: s.network, ...(changes.length ? { git_config: changes } : {}) };
}

export function describeRisk(s: SandboxState, mode: Mode): string {
  if (!s.contained)
    return "runs uncontained, with the user's full rights: it can write files anywhere and reach the network";
  const writes =
    mode === "workspace-write"
      ? "can write the workspace (not .git config or hooks, the control plane, or credentials)"
      : "cannot write the workspace";
  return `runs contained (${mode}): ${writes}; ${s.network ? "network allowed" : "no network"}`;
}

/**
 * The sandbox mode of a call that runs processes: a person's approval, or an envelope rule that grants
 * writes, gives workspace-write; the envelope's read-only tier gives read-only (envelope-eval.ts).
 */
export function sandboxMode(gates: Decision[]): Mode {
  if (gates.some((g) => g.gate === "approval" && g.action === "allow")) return "workspace-write";
  return gates.find((g) => g.gate === "envelope")?.mode ?? "workspace-write";
}

/** The start-up line (`latch mcp` on stderr): do the processes latch starts run contained, and how? */
export function containmentLine(settings: Settings, probe: ProbeResult): string {
  const parts: string[] = [];
  for (const [toolset, tool] of [
    ["local_shell", "local_shell"],
    ["catalog", "run_tool"],
  ] as const) {
    const s = toolsetContainment(toolset, settings)!;
    if (s.containment === "off") parts.push(`${tool}: contained: false (_containment = off)`);
    else if (!probe.available)
      parts.push(
        `${tool}: contained: false (${probe.reason}${s.containment === "required" ? "; required: every call is refused" : ""})`,
      );
    else
      parts.push(
        `${tool}: contained: true, mode read-only for the read-only tier and workspace-write otherwise, network ${s.network ? "allowed" : "denied"}`,
      );
  }
  const how = probe.available ? ` [${probe.detail}]` : "";
  return `${parts.join("; ")}${how}`;
}
