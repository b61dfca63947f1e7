// The host's side of the gateway: the attached servers of the config, started once with the host, and
// their tools as ToolSpecs (src/tools/attached.ts) beside the built-in ones, so every call to one goes
// through the one call path. A server's tools/list_changed rebuilds the list; the host's listeners
// (each MCP session) then tell their clients. The gateway (the MCP client, the OpenAPI parser, Ajv:
// ~500 KB of the bundle) is imported only by a host whose config attaches something, not at every start.
import type { Config } from "../config/load.js";
import type { Gateway, UpstreamConfig } from "../gateway/gateway.js";
import type { LaunchPlace } from "../gateway/launch.js";
import { TOOLS } from "../registry.js";
import { attachedTool } from "../tools/attached.js";
import type { ToolSpec } from "../tools/define.js";

export interface Attached {
  readonly gateway: Gateway;
  /** The attached tools offered now. */
  specs(): readonly ToolSpec[];
  /** Why a name of an attached tool is not offered (refused, changed), if it is one. */
  unlisted(name: string): string | undefined;
  close(): Promise<void>;
}

/** Whether the config attaches anything (then the host opens the gateway, and probes the sandbox). */
export function attachesServers(config: Config): boolean {
  return upstreamsOf(config).length > 0;
}

/** Whether it attaches a server latch starts (then the host probes the sandbox it runs in). */
export function startsServers(config: Config): boolean {
  return (config.mcpServers ?? []).some((s) => s.kind === "stdio");
}

/** Every upstream the config attaches: MCP servers (stdio, url), then OpenAPI services. */
function upstreamsOf(config: Config): UpstreamConfig[] {
  return [...(config.mcpServers ?? []), ...(config.openapi ?? [])];
}

/** The values the attached upstreams' configs reference (env, headers, auth): secrets the disclosure gate must know. */
export async function attachedSecrets(
  config: Config,
  env: Readonly<NodeJS.ProcessEnv>,
): Promise<Record<string, string>> {
  if (!attachesServers(config)) return {};
  const { Gateway } = await import("../gateway/gateway.js");
  return Gateway.secrets(upstreamsOf(config), env);
}

export async function openAttached(
  config: Config,
  place: Omit<LaunchPlace, "emptyRoot">,
  stateDb: string,
  onChange: () => void,
): Promise<Attached> {
  const [{ Gateway }, { Pins }] = await Promise.all([import("../gateway/gateway.js"), import("../gateway/pins.js")]);
  // Every built-in name and alias: an attached tool may not take one.
  const builtin = new Set(TOOLS.flatMap((t) => [t.name, ...t.aliases]));
  const gateway = await Gateway.open(upstreamsOf(config), place, builtin, new Pins(stateDb));
  let specs = build(gateway);
  gateway.onChange(() => {
    specs = build(gateway);
    onChange();
  });
  return {
    gateway,
    specs: () => specs,
    unlisted: (name) => gateway.whyNot(name),
    close: () => gateway.close(),
  };
}

function build(gateway: Gateway): ToolSpec[] {
  return gateway.tools().map((t) =>
    attachedTool({
      name: t.name,
      server: t.server,
      kind: t.kind,
      upstream: t.upstream,
      description: t.definition.description,
      inputSchema: t.definition.inputSchema,
      ...(t.definition.annotations ? { annotations: t.definition.annotations } : {}),
      sha256: t.sha256,
      stillPinned: () => gateway.whyNot(t.name, t.sha256),
      request: (args) => gateway.requestOf(t.name, args),
      call: (args, signal) => gateway.call(t.name, args, signal),
    }),
  );
}
