// agents.toml: read only from --config, LATCH_CONFIG or ~/.config/latch/agents.toml — never from the
// workspace, so a model cannot write its own policy. A bad file stops startup naming file, line, key.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse, TomlError } from "smol-toml";
import { z } from "zod";
import { errnoCode } from "../errors.js";
import { sha256 } from "../fs/text.js";
import { escapeRegex } from "../fs/glob.js";
import { BUILTIN_ENVELOPES } from "../policy/builtin-envelopes.js";
import { allDefinitions, EnvelopeError, envelopeError, resolveEnvelope } from "../policy/envelope-parse.js";
import { envelopeDef, type EnvelopeDef } from "../policy/envelope-schema.js";
import { defaultConfigPath } from "./config-path.js";
import { ConfigError } from "./error.js";
import { policiesLayer } from "./settings.js";
import { table, type RawPolicies } from "./toolsets.js";
import { openapiTables, parseServers, serversSchema, type McpServerConfig, type OpenApiConfig } from "./servers.js";

export { ConfigError };

interface AgentConfig {
  tools?: string[];
  envelope?: string;
  description?: string;
  toolsPolicies: RawPolicies;
}

export interface Config {
  /** The file it came from, or undefined when there is none (all defaults). */
  file?: string;
  sha256?: string;
  toolsPolicies: RawPolicies;
  agents: Record<string, AgentConfig>;
  /** `[envelopes.NAME]`, validated (extends chains resolve). */
  envelopes?: Record<string, EnvelopeDef>;
  /** `policy_programs`, made absolute against the config file's folder. */
  policyPrograms?: string[];
  /** `[log]`: the retention of the run logs, applied when a host starts (src/audit/log-files.ts). */
  log?: LogConfig;
  /** `[mcp_servers.NAME]`: the MCP servers latch attaches (src/gateway/). */
  mcpServers?: McpServerConfig[];
  /** `[openapi.NAME]`: the OpenAPI services latch attaches. */
  openapi?: OpenApiConfig[];
}

interface LogConfig {
  retentionDays?: number;
  maxFiles?: number;
}

// One check of the whole file: every table and key, the toolsets' values by their own schemas. Made at
// the first file parsed (z.lazy), not when the program loads: a start without agents.toml never uses it.
const fileSchema = z.lazy(fileTable);

function fileTable() {
  const agentSchema = table({
    description: z.string().optional(),
    tools: z.array(z.string()).optional(),
    envelope: z.string().optional(),
    tools_policies: policiesLayer.optional(),
  });
  /** A whole number, at least 1: the count of days or files a retention keeps. */
  const atLeastOne = (what: string) =>
    z
      .number({ error: `expected a whole number of ${what}, at least 1 (for no limit, leave the key out)` })
      .int({ error: `expected a whole number of ${what}, at least 1` })
      .min(1, { error: `expected a whole number of ${what}, at least 1 (for no limit, leave the key out)` });
  const logSchema = z.strictObject(
    { retention_days: atLeastOne("days").optional(), max_files: atLeastOne("files").optional() },
    { error: (iss) => (iss.code === "unrecognized_keys" ? "accepted in [log]: retention_days, max_files" : undefined) },
  );
  return z.strictObject(
    {
      tools_policies: policiesLayer.optional(),
      agents: z.record(z.string(), agentSchema).optional(),
      envelopes: z.record(z.string(), envelopeDef).optional(),
      policy_programs: z.array(z.string().min(1)).optional(),
      log: logSchema.optional(),
      mcp_servers: serversSchema().optional(),
      openapi: openapiTables().optional(),
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? "accepted at the top level: tools_policies, agents, envelopes, policy_programs, log, mcp_servers, openapi"
          : undefined,
    },
  );
}

/** Which file to read: --config, else LATCH_CONFIG, else the default (which may be absent). */
export function chooseConfigPath(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): { file: string; required: boolean } {
  if (explicit) return { file: path.resolve(explicit), required: true };
  if (env.LATCH_CONFIG) return { file: path.resolve(env.LATCH_CONFIG), required: true };
  return { file: defaultConfigPath(env), required: false };
}

export function loadConfig(explicit?: string, env: NodeJS.ProcessEnv = process.env): Config {
  const { file, required } = chooseConfigPath(explicit, env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT" && !required) return { toolsPolicies: {}, agents: {} };
    if (errnoCode(err) === "ENOENT")
      throw new ConfigError(
        `${file}: no such file. Pass an existing agents.toml with --config, or unset LATCH_CONFIG.`,
      );
    throw new ConfigError(`${file}: cannot be read (${(err as Error).message}).`);
  }
  return parseConfig(text, file);
}

export function parseConfig(text: string, file = "agents.toml"): Config {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    if (err instanceof TomlError)
      throw new ConfigError(`${file}:${err.line}:${err.column}: not valid TOML: ${firstLine(err.message)}`);
    throw new ConfigError(`${file}: not valid TOML: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(data, { reportInput: true, jitless: true });
  if (!parsed.success) throw new ConfigError(describeZodIssue(parsed.error.issues[0], text, file));
  const cfg = parsed.data;
  // The toolsets' tables stay strings: an agent's keys go over the global ones before the host parses them.
  const toolsPolicies = strings(cfg.tools_policies);
  const agents: Record<string, AgentConfig> = {};
  for (const [name, a] of Object.entries(cfg.agents ?? {})) {
    agents[name] = {
      tools: a.tools,
      envelope: a.envelope,
      description: a.description,
      toolsPolicies: strings(a.tools_policies),
    };
  }
  const envelopes = checkEnvelopes(cfg.envelopes ?? {}, agents, text, file);
  const base = path.dirname(path.resolve(file));
  const policyPrograms = (cfg.policy_programs ?? []).map((p) => path.resolve(base, p));
  const log = cfg.log ? { retentionDays: cfg.log.retention_days, maxFiles: cfg.log.max_files } : undefined;
  const attached = parseServers(cfg, base);
  if ("error" in attached) throw new ConfigError(`${locateKey(file, text, attached.keyPath)}: ${attached.error}.`);
  return {
    file,
    sha256: sha256(text),
    toolsPolicies,
    agents,
    envelopes,
    policyPrograms,
    ...(log ? { log } : {}),
    ...(attached.servers.length ? { mcpServers: attached.servers } : {}),
    ...(attached.openapi.length ? { openapi: attached.openapi } : {}),
  };
}

/** No built-in redefined, every extends chain resolves, and each agent's envelope exists. */
function checkEnvelopes(
  defs: Record<string, EnvelopeDef>,
  agents: Record<string, AgentConfig>,
  text: string,
  file: string,
): Record<string, EnvelopeDef> {
  try {
    for (const name of Object.keys(defs)) {
      if (name in BUILTIN_ENVELOPES)
        throw new EnvelopeError(
          ["envelopes", name],
          `\`envelopes.${name}\` would redefine the built-in envelope \`${name}\`; give yours another name and extend it (extends = "${name}")`,
        );
    }
    const all = allDefinitions(defs);
    for (const name of Object.keys(defs)) resolveEnvelope(name, all);
    for (const [agent, a] of Object.entries(agents)) {
      if (a.envelope !== undefined && !(a.envelope in all)) {
        throw new EnvelopeError(
          ["agents", agent, "envelope"],
          `\`agents.${agent}.envelope\` names the unknown envelope \`${a.envelope}\`; known: ${Object.keys(all).join(", ")}`,
        );
      }
    }
  } catch (err) {
    if (!(err instanceof EnvelopeError)) throw err;
    throw new ConfigError(`${locateKey(file, text, err.keyPath)}: ${err.message}.`);
  }
  return defs;
}

/**
 * "file:line" of a nested key, written any way TOML allows: under its own table header
 * (`[envelopes.m.shell]` + `blacklist = …`), as a dotted key (`shell.blacklist = …` under
 * `[envelopes.m]`), or as an array of tables (`[[envelopes.m.always_deny]]`). List indexes are skipped.
 */
function locateKey(file: string, text: string, keyPath: string[]): string {
  const keys = keyPath.filter((k) => !/^[0-9]+$/.test(k));
  const lines = text.split("\n");
  const norm = (l: string) => l.trim().replace(/\s+/g, "").replace(/["']/g, "");
  for (let split = keys.length - 1; split >= 0; split--) {
    const table = keys.slice(0, split).join(".");
    const rest = keys.slice(split).join(".");
    const header = split === 0 ? 0 : lines.findIndex((l) => norm(l) === `[${table}]` || norm(l) === `[[${table}]]`);
    if (header < 0) continue;
    for (let i = split === 0 ? 0 : header + 1; i < lines.length; i++) {
      const n = norm(lines[i]);
      if (split > 0 && n.startsWith("[") && i > header) break;
      if (
        n.startsWith(`${rest}=`) ||
        n.startsWith(`${rest}.`) ||
        n === `[${table}.${rest}]` ||
        n === `[[${table}.${rest}]]`
      )
        return `${file}:${i + 1}`;
    }
    if (split === keys.length - 1 || split > 0) {
      const whole = lines.findIndex((l) => norm(l) === `[${keys.join(".")}]` || norm(l) === `[[${keys.join(".")}]]`);
      if (whole >= 0) return `${file}:${whole + 1}`;
    }
  }
  return where(file, text, keys.slice(0, -1), keys[keys.length - 1]);
}

function describeZodIssue(issue: z.core.$ZodIssue, text: string, file: string): string {
  const keyPath = issue.path.map(String);
  if (keyPath[0] === "envelopes" && keyPath.length > 1) {
    const err = envelopeError(issue, []); // the envelope schema's fragments, worded with the key
    return `${locateKey(file, text, err.keyPath)}: ${err.message}.`;
  }
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0];
    const what =
      keyPath[keyPath.length - 1] === "tools_policies"
        ? `unknown toolset \`${key}\` in \`${keyPath.join(".")}\``
        : `unknown key \`${[...keyPath, key].join(".")}\``;
    return `${where(file, text, keyPath, key)}: ${what}; ${issue.message}.`;
  }
  const last = keyPath[keyPath.length - 1];
  return `${where(file, text, keyPath.slice(0, -1), last)}: \`${keyPath.join(".")}\`: ${issue.message}.`;
}

/** "file:line" for a key, found after its table header where there is one; "file" when not found. */
function where(file: string, text: string, table: string[], key?: string): string {
  const lines = text.split("\n");
  const header = table.length ? lines.findIndex((l) => l.trim().replace(/\s+/g, "") === `[${table.join(".")}]`) : 0;
  const from = Math.max(0, header);
  if (key !== undefined) {
    const re = new RegExp(`^\\s*["']?${escapeRegex(key)}["']?\\s*[=.]`);
    for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return `${file}:${i + 1}`;
    for (let i = 0; i < lines.length; i++) if (lines[i].includes(key)) return `${file}:${i + 1}`;
  }
  return header >= 0 && table.length ? `${file}:${header + 1}` : file;
}

/** A checked layer of `[tools_policies]`, as the strings it holds (unset keys are absent, never undefined). */
function strings(layer: Record<string, Record<string, string | undefined> | undefined> = {}): RawPolicies {
  const out: RawPolicies = {};
  for (const [toolset, values] of Object.entries(layer)) {
    if (values === undefined) continue;
    out[toolset] = {};
    for (const [k, v] of Object.entries(values)) if (v !== undefined) out[toolset][k] = v;
  }
  return out;
}

function firstLine(s: string): string {
  return s.split("\n")[0];
}
