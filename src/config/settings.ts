// A host's toolset settings: `[tools_policies.*]` (an agent's keys over the global ones, key by key)
// parsed once, when the host is made, into typed values that every call's tools read (ToolEnv.settings).
// The same zod schemas check each layer of agents.toml as it loads (load.ts).
import { z } from "zod";
import { ConfigError } from "./error.js";
import type { Config } from "./load.js";
import {
  ast,
  catalog,
  localFs,
  localShell,
  skills,
  type AstSettings,
  type CatalogSettings,
  type LocalFsSettings,
  type LocalShellSettings,
  type RawPolicies,
  type SkillsSettings,
} from "./toolsets.js";
import { web, type WebSettings } from "./web.js";

export interface Settings {
  local_fs: LocalFsSettings;
  ast: AstSettings;
  local_shell: LocalShellSettings;
  catalog: CatalogSettings;
  web: WebSettings;
  skills: SkillsSettings;
}

const TOOLSETS = { local_fs: localFs, ast, local_shell: localShell, catalog, web, skills };
const unknownToolset = {
  error: (iss: z.core.$ZodRawIssue) =>
    iss.code !== "unrecognized_keys"
      ? undefined
      : // Tables are named by toolset, not tool: run_tool's (the name the tool shows) is catalog's.
        iss.keys.includes("run_tool")
        ? "run_tool's settings (`_containment`, `_network`, `_tools`, …) are under [tools_policies.catalog], its toolset"
        : `accepted: ${Object.keys(TOOLSETS).join(", ")}`,
};

/** One layer of `[tools_policies]` (the global one, or an agent's): each toolset's keys checked, kept as strings. */
export const policiesLayer = z.strictObject(
  {
    local_fs: localFs.in.optional(),
    ast: ast.in.optional(),
    local_shell: localShell.in.optional(),
    catalog: catalog.in.optional(),
    web: web.in.optional(),
    skills: skills.in.optional(),
  },
  unknownToolset,
);

/** Every toolset's typed settings; a toolset with no table gets its defaults. Only parseSettings uses it. */
export const settingsSchema = z.strictObject(
  {
    local_fs: localFs.prefault({}),
    ast: ast.prefault({}),
    local_shell: localShell.prefault({}),
    catalog: catalog.prefault({}),
    web: web.prefault({}),
    skills: skills.prefault({}),
  },
  unknownToolset,
);

/** The policies an agent runs with: its own keys over the global ones, key by key. */
function effectivePolicies(config: Config, agent?: string): RawPolicies {
  if (agent !== undefined && !(agent in config.agents)) {
    const known = Object.keys(config.agents);
    throw new ConfigError(
      `Unknown agent \`${agent}\`; ${known.length ? `the config defines: ${known.join(", ")}` : "the config defines no agents"}.`,
    );
  }
  const own = agent === undefined ? {} : config.agents[agent].toolsPolicies;
  const out: RawPolicies = {};
  for (const ts of new Set([...Object.keys(config.toolsPolicies), ...Object.keys(own)])) {
    out[ts] = { ...config.toolsPolicies[ts], ...own[ts] };
  }
  return out;
}

/**
 * The one parse of a host's toolset settings (createHost calls it; every call reads the result). Each
 * layer was checked as the file loaded; what can still fail here is a pair of keys from two layers
 * (an agent's `_timeout` over a global `_max_timeout`), or a config an embedder built by hand.
 */
export function parseSettings(config: Config, agent?: string): Settings {
  // Once per start and reload: zod compiling its fast path for this one parse would cost more than it saves.
  const parsed = settingsSchema.safeParse(effectivePolicies(config, agent), { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = ["tools_policies", ...issue.path.map(String)];
    if (issue.code === "unrecognized_keys") key.push(issue.keys[0]);
    const layers = agent === undefined ? "" : ` (agent \`${agent}\`'s keys over the global ones)`;
    throw new ConfigError(`${config.file ?? "agents.toml"}: \`${key.join(".")}\`${layers}: ${issue.message}.`);
  }
  return deepFreeze(parsed.data);
}

/** Every call shares these values: none may change them. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
