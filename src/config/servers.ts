// `[mcp_servers.<name>]` and `[openapi.<name>]` in agents.toml: the upstreams latch attaches (the
// gateway, src/gateway/). Checked here with the rest of the file, so a bad table stops startup naming
// its key. Secrets are never written in the file: a value that reaches a server (env, headers, auth)
// is a reference, `env:NAME`, read from latch's start-up environment.
import path from "node:path";
import { z } from "zod";
import { table } from "./toolsets.js";

/** `env:NAME`: the value of NAME in latch's start-up environment. */
const REF = /^env:[A-Za-z_][A-Za-z0-9_]*$/;
const ref = () =>
  z.string().regex(REF, {
    error: (iss) =>
      `expected a reference \`env:NAME\` (the value is read from latch's environment, never written in the file), got \`${String(iss.input).slice(0, 40)}\``,
  });
/** A server's name is the prefix of its tools' names (`<name>__<tool>`): no `__` inside it. */
const serverName = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

const mcpServerTable = () =>
  table({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), ref()).optional(),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    headers: z.record(z.string().min(1), ref()).optional(),
    workspace: z.enum(["ro", "rw"]).optional(),
    network: z.boolean().optional(),
    containment: z.enum(["required", "off"]).optional(),
    private_hosts: z.array(z.string().min(1)).optional(),
    timeout_s: z.number().int().min(1).max(3600).optional(),
    max_message_bytes: z.number().int().min(1024).optional(),
  });

const openapiTable = () =>
  table({
    spec: z.string().min(1),
    base_url: z.url({ protocol: /^https?$/ }),
    auth: z
      .union([
        z.strictObject({ bearer: ref() }),
        z.strictObject({ basic_user: ref(), basic_password: ref() }),
        z.strictObject({ header: z.string().min(1), value: ref() }),
      ])
      .optional(),
    include: z.array(z.string().min(1)).optional(),
    exclude: z.array(z.string().min(1)).optional(),
    private_hosts: z.array(z.string().min(1)).optional(),
    timeout_s: z.number().int().min(1).max(3600).optional(),
    max_response_bytes: z.number().int().min(1024).optional(),
  });

// Made by load.ts's file schema, itself made at the first agents.toml parsed, not when the program loads.
export const serversSchema = () => z.record(z.string(), mcpServerTable());
export const openapiTables = () => z.record(z.string(), openapiTable());

/** How a server is reached: a process latch starts (stdio), or a URL (streamable HTTP). */
export type McpServerConfig = {
  name: string;
  /** Seconds one call may take before it is an error (default 60). */
  timeoutS: number;
  /** The longest message the server may send; a longer one stops the server (stdio) or fails the answer (HTTP). */
  maxMessageBytes: number;
} & (
  | {
      kind: "stdio";
      command: string;
      args: string[];
      /** Variable → the start-up variable it is read from. */
      env: Record<string, string>;
      cwd?: string;
      workspace?: "ro" | "rw";
      network: boolean;
      containment: "required" | "off";
    }
  | {
      kind: "http";
      url: string;
      /** Header → the start-up variable its value is read from. */
      headers: Record<string, string>;
      /** Hosts, as written in the URL, the guarded fetch may reach at a private address (loopback, LAN). */
      privateHosts: string[];
    }
);

export interface OpenApiConfig {
  name: string;
  kind: "openapi";
  /** Absolute, against the config file's folder. */
  spec: string;
  baseUrl: string;
  auth?: { bearer: string } | { basicUser: string; basicPassword: string } | { header: string; value: string };
  include: string[];
  exclude: string[];
  privateHosts: string[];
  timeoutS: number;
  /** The most of one response body latch reads; the rest is cut, with a note. */
  maxResponseBytes: number;
}

const DEFAULT_SERVER_TIMEOUT_S = 60;
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The variable a reference names. */
function refName(r: string): string {
  return r.slice("env:".length);
}

/** The value of each `env:NAME` reference in `refs`, from latch's start-up environment; `where` names the key. */
export function readRefs(
  refs: Readonly<Record<string, string>>,
  env: Readonly<NodeJS.ProcessEnv>,
  where: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, r] of Object.entries(refs)) {
    const v = env[refName(r)];
    if (v === undefined)
      throw new Error(
        `\`${where}.${k}\` reads \`${refName(r)}\`, which is not set in latch's environment; set it where latch starts`,
      );
    out[k] = v;
  }
  return out;
}

type RawServer = z.infer<ReturnType<typeof mcpServerTable>>;
type RawOpenApi = z.infer<ReturnType<typeof openapiTable>>;

/**
 * The checked tables as typed values; a problem is a message naming the key (load.ts adds the file
 * and line). Names are checked across both tables: they share the `<name>__` namespace.
 */
export function parseServers(
  raw: { mcp_servers?: Record<string, RawServer>; openapi?: Record<string, RawOpenApi> },
  base: string,
): { servers: McpServerConfig[]; openapi: OpenApiConfig[] } | { error: string; keyPath: string[] } {
  const servers: McpServerConfig[] = [];
  const openapi: OpenApiConfig[] = [];
  for (const [table, names] of [
    ["mcp_servers", Object.keys(raw.mcp_servers ?? {})],
    ["openapi", Object.keys(raw.openapi ?? {})],
  ] as const) {
    for (const name of names) {
      if (!serverName.test(name) || name.length > 32)
        return {
          error: `\`${table}.${name}\`: a name of letters, digits, - and single _ (at most 32), as it prefixes its tools (\`${name}__<tool>\`)`,
          keyPath: [table, name],
        };
      if (table === "openapi" && raw.mcp_servers?.[name])
        return {
          error: `\`openapi.${name}\` has the name of \`mcp_servers.${name}\`; their tools would share \`${name}__\`: rename one`,
          keyPath: [table, name],
        };
    }
  }
  for (const [name, s] of Object.entries(raw.mcp_servers ?? {})) {
    const common = {
      name,
      timeoutS: s.timeout_s ?? DEFAULT_SERVER_TIMEOUT_S,
      maxMessageBytes: s.max_message_bytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    };
    if ((s.command === undefined) === (s.url === undefined))
      return {
        error: `\`mcp_servers.${name}\` needs exactly one of \`command\` (stdio) or \`url\` (HTTP)`,
        keyPath: ["mcp_servers", name],
      };
    if (s.url !== undefined) {
      for (const k of ["args", "env", "cwd", "workspace", "network", "containment"] as const)
        if (s[k] !== undefined)
          return {
            error: `\`mcp_servers.${name}.${k}\` is for a server latch starts (\`command\`), not a \`url\``,
            keyPath: ["mcp_servers", name, k],
          };
      servers.push({
        ...common,
        kind: "http",
        url: s.url,
        headers: s.headers ?? {},
        privateHosts: s.private_hosts ?? [],
      });
      continue;
    }
    for (const k of ["headers", "private_hosts"] as const)
      if (s[k] !== undefined)
        return {
          error: `\`mcp_servers.${name}.${k}\` is for a \`url\` server; a server latch starts reaches the network only with \`network = true\``,
          keyPath: ["mcp_servers", name, k],
        };
    servers.push({
      ...common,
      kind: "stdio",
      command: s.command!,
      args: s.args ?? [],
      env: s.env ?? {},
      ...(s.cwd !== undefined ? { cwd: path.resolve(base, s.cwd) } : {}),
      ...(s.workspace !== undefined ? { workspace: s.workspace } : {}),
      network: s.network ?? false,
      containment: s.containment ?? "required",
    });
  }
  for (const [name, o] of Object.entries(raw.openapi ?? {})) {
    const a = o.auth;
    openapi.push({
      name,
      kind: "openapi",
      spec: path.resolve(base, o.spec),
      baseUrl: o.base_url,
      ...(a
        ? {
            auth:
              "bearer" in a
                ? { bearer: a.bearer }
                : "basic_user" in a
                  ? { basicUser: a.basic_user, basicPassword: a.basic_password }
                  : { header: a.header, value: a.value },
          }
        : {}),
      include: o.include ?? [],
      exclude: o.exclude ?? [],
      privateHosts: o.private_hosts ?? [],
      timeoutS: o.timeout_s ?? DEFAULT_SERVER_TIMEOUT_S,
      maxResponseBytes: o.max_response_bytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    });
  }
  return { servers, openapi };
}
