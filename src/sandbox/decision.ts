// What the pipeline needs to know and say about a call's processes: whether they run contained and
// with network (for the envelope's tiers), the mode the decision grants, and the words for the policy
// log, `latch explain` and approval requests.
import type { Settings } from "../config/settings.js";
import type { Decision } from "../host/types.js";
import type { SandboxState } from "../policy/envelope-eval.js";
import type { ToolSpec } from "../tools/define.js";
import { isContained, toolsetContainment } from "./call.js";
import type { Mode, ProbeResult } from "./types.js";

/** Does a call of `tool` run contained, with network? Undefined for tools that start no process. */
export function sandboxState(tool: ToolSpec, settings: Settings, probe: ProbeResult): SandboxState | undefined {
  if (tool.axis !== "shell") return undefined;
  const s = toolsetContainment(tool.toolset, settings);
  if (!s) return undefined;
  const contained = isContained(s, probe);
  return { contained, network: s.network || !contained };
}

/** What the log, `latch explain` and approval requests say about a call's processes. */
export function sandboxRecord(s: SandboxState, mode: Mode): { contained: boolean; mode?: Mode; network: boolean } {
  return s.contained ? { contained: true, mode, network: s.network } : { contained: false, network: s.network };
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
