// Network by approval (local_shell's `_network = "ask"` and `_network_domains`): which names a
// contained call's commands will reach (shell/domains.ts), whether the operator pre-granted them,
// and, once the decision is made, the filtering proxy the call's processes reach them through
// (sandbox/proxy/). The box never gets network of its own this way: only the proxy's granted names.
import type { Settings } from "../config/settings.js";
import type { Decision } from "../policy/decision.js";
import type { Effect } from "../policy/effect.js";
import type { SandboxState } from "../policy/envelope-eval.js";
import type { CallProxy } from "../sandbox/proxy/filter.js";
import { domainMatches } from "../sandbox/proxy/grant.js";
import type { CallContainment } from "../sandbox/call.js";
import { domainsOf } from "../shell/domains.js";
import type { ToolSpec } from "../tools/define.js";

/** What a call's commands want: the names, or "any" when latch cannot tell ("network"). */
export interface NetworkWant {
  domains: string[] | "any";
  /** Not all of them pre-granted, and `_network = "ask"`: a person is asked. */
  ask: boolean;
}

/** The call's wish for network through the proxy, or undefined when the proxy does not apply. */
export function networkWant(
  tool: ToolSpec,
  effect: Effect,
  settings: Settings,
  sandbox: SandboxState | undefined,
  where: { root: string; env: NodeJS.ProcessEnv; home?: string },
): NetworkWant | undefined {
  const proxied = settings.local_shell.proxied;
  if (tool.toolset !== "local_shell" || !proxied || !sandbox?.contained || sandbox.network) return undefined;
  const run = effect.shell;
  if (!run || run.raw !== undefined) return undefined;
  const cwd = run.steps[0]?.cwd ?? where.root;
  const wanting = run.commands.filter((c) => !c.capabilities || c.capabilities.network);
  if (wanting.length === 0) return undefined;
  const found = wanting.map((c) => domainsOf(c.argv, { ...where, cwd }));
  const domains = found.some((d) => d === undefined) ? "any" : [...new Set(found.flat() as string[])].sort();
  const pre = (d: string) => proxied.domains.some((p) => domainMatches(p, d));
  const covered = domains !== "any" && domains.every(pre);
  return { domains, ask: proxied.ask && !covered };
}

/** How the approval request and the log name what is asked. */
export function describeWant(w: NetworkWant): string {
  return w.domains === "any"
    ? 'network ("any" public name: latch cannot tell which this command reaches)'
    : `network to ${w.domains.join(", ")}`;
}

/** The gate that asks for a network grant (raises an allow to approve; adds its words to an approve). */
export function askForNetwork(final: Decision, w: NetworkWant): Decision | undefined {
  if (!w.ask || final.action === "deny") return undefined;
  return {
    action: "approve",
    reason: `${describeWant(w)}: tools_policies.local_shell._network = "ask" needs a person's grant`,
    gate: "toolset",
    origin: "tools_policies.local_shell._network",
  };
}

/**
 * The proxy for an allowed call: the pre-granted names, and the wanted ones when a person approved
 * them (`approved`). Undefined when nothing is granted: the call runs without network.
 */
export async function grantProxy(
  cc: CallContainment | undefined,
  settings: Settings,
  w: NetworkWant | undefined,
  approved: boolean,
): Promise<CallProxy | undefined> {
  const proxied = settings.local_shell.proxied;
  // The bridge is bubblewrap's (Linux): under Seatbelt a grant gives nothing, and the call runs without network.
  if (!cc?.confinement || cc.containment?.kind !== "bubblewrap" || !proxied || !w) return undefined;
  const asked = approved && w.ask ? w.domains : [];
  const domains = asked === "any" ? "any" : [...new Set([...proxied.domains, ...asked])];
  if (domains !== "any" && domains.length === 0) return undefined;
  const { CallProxy } = await import("../sandbox/proxy/filter.js"); // a granted call's alone (grant.ts)
  const proxy = new CallProxy({ domains, testHosts: proxied.testHosts });
  cc.confinement.proxy = proxy;
  cc.proxy = proxy;
  return proxy;
}
