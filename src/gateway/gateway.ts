// The gateway: every `[mcp_servers.X]` and `[openapi.X]` latch attaches, their tools under latch's
// names, and what each call to one comes back as. It runs nothing on its own: the host offers its tools (src/tools/attached.ts)
// and every call goes through the one call path (src/host/pipeline.ts) like a built-in tool's.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig, OpenApiConfig } from "../config/servers.js";
import { readRefs } from "../config/servers.js";
import { sha256Json } from "../audit/canonical-json.js";
import { configuredEnv, stdioTransport, type LaunchPlace } from "./launch.js";
import { httpTransport } from "./http.js";
import { exposedName, refuseCollisions } from "./names.js";
import { OpenApiService } from "./openapi-service.js";
import { Upstream, UpstreamError, type Source, type SourceTool } from "./upstream.js";
import { checkPins, type PinCheck, type Pins } from "./pins.js";
import { realpathOf } from "../fs/realpath.js";

/** What a server says a tool is: the part that is pinned (src/gateway/pins.ts). */
interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** An OpenAPI operation's request: a tool moved to another method or path is a changed tool. */
  operation?: { method: string; path: string };
}

/** One `[mcp_servers.X]` (stdio or url) or `[openapi.X]` table. */
export type UpstreamConfig = McpServerConfig | OpenApiConfig;

export interface AttachedTool {
  /** The name clients see: `<server>__<tool>`. */
  name: string;
  server: string;
  kind: "mcp" | "openapi";
  /** The upstream's own name. */
  upstream: string;
  definition: ToolDefinition;
  /** sha256 of the definition's canonical JSON. */
  sha256: string;
}

export interface ServerStatus {
  name: string;
  kind: UpstreamConfig["kind"];
  /** `ready`: its tools are listed; `failed`: it could not be started or listed (`error` says why). */
  state: "ready" | "failed";
  error?: string;
  tools: AttachedTool[];
  /** Tools not offered, each with the reason (a name taken, …). */
  refused: { name: string; upstream: string; reason: string }[];
  /** Each tool against its pin: new, changed and removed ones carry the diff (src/gateway/pins.ts). */
  pins: PinCheck[];
}

/** What one attached call returns, shaped for the model: text verbatim, structured content, media. */
export interface AttachedResult {
  server: string;
  tool: string;
  text?: string;
  structured?: unknown;
  media?: { type: "image"; data: string; mimeType: string }[];
  /** Other blocks (resources, audio, links), described, not inlined. */
  other?: unknown[];
}

const STDERR_TAIL = 4096;

interface Server {
  config: UpstreamConfig;
  upstream: Source;
  status: ServerStatus;
  stderr: string;
}

export class Gateway {
  private readonly servers = new Map<string, Server>();
  private readonly listeners = new Set<() => void>();
  private readonly emptyRoot: string;
  private offered: AttachedTool[] = [];
  private byName = new Map<string, { tool: AttachedTool; server: Server }>();

  private constructor(
    configs: readonly UpstreamConfig[],
    place: Omit<LaunchPlace, "emptyRoot">,
    private readonly builtins: ReadonlySet<string>,
    private readonly pins: Pins,
  ) {
    this.emptyRoot = realpathOf(mkdtempSync(path.join(os.tmpdir(), "latch-servers-")));
    const full: LaunchPlace = { ...place, emptyRoot: this.emptyRoot };
    for (const config of configs) {
      const server: Server = {
        config,
        stderr: "",
        status: {
          name: config.name,
          kind: config.kind,
          state: "failed",
          error: "not started",
          tools: [],
          refused: [],
          pins: [],
        },
        upstream: undefined as unknown as Source,
      };
      server.upstream =
        config.kind === "openapi"
          ? new OpenApiService(config, place.startupEnv)
          : new Upstream({
              name: config.name,
              timeoutMs: config.timeoutS * 1000,
              transport: async () =>
                config.kind === "http"
                  ? httpTransport(config, place.startupEnv)
                  : stdioTransport(config, full, (c) => {
                      server.stderr = (server.stderr + c.toString("utf8")).slice(-STDERR_TAIL);
                    }),
              onListChanged: () => void this.refresh(server),
              stderrTail: () => server.stderr,
            });
      this.servers.set(config.name, server);
    }
  }

  /** Start every server and read its tools; a server that fails is reported in status(), never fatal. */
  static async open(
    configs: readonly UpstreamConfig[],
    place: Omit<LaunchPlace, "emptyRoot">,
    builtins: ReadonlySet<string>,
    pins: Pins,
  ): Promise<Gateway> {
    const g = new Gateway(configs, place, builtins, pins);
    await Promise.all([...g.servers.values()].map((s) => g.load(s)));
    g.rebuild();
    return g;
  }

  /** The secret values the servers' configs reference: the disclosure gate must know them. */
  static secrets(configs: readonly UpstreamConfig[], env: Readonly<NodeJS.ProcessEnv>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const c of configs) {
      const [key, values] =
        c.kind === "stdio"
          ? [`mcp_servers.${c.name}.env`, () => configuredEnv(c, env)]
          : c.kind === "http"
            ? [`mcp_servers.${c.name}.headers`, () => readRefs(c.headers, env, `mcp_servers.${c.name}.headers`)]
            : [`openapi.${c.name}.auth`, () => OpenApiService.secrets(c, env)];
      try {
        for (const [k, v] of Object.entries(values())) out[`${key}.${k}`] = v;
      } catch {
        // unset: the server reports it when it starts (or its call, for an OpenAPI service)
      }
    }
    return out;
  }

  private async load(s: Server): Promise<void> {
    try {
      const listed = await s.upstream.listTools();
      s.status = {
        ...s.status,
        state: "ready",
        error: undefined,
        tools: listed.map((t) => attachedOf(s.config, t)),
      };
    } catch (err) {
      s.status = { ...s.status, state: "failed", error: (err as Error).message, tools: [] };
    }
  }

  private async refresh(s: Server): Promise<void> {
    await this.load(s);
    this.rebuild();
    for (const l of [...this.listeners]) l();
  }

  /**
   * Names checked across every server (a collision refuses the tools involved, with the reason), then
   * each tool against its pin: only a tool whose definition is the one approved is offered.
   */
  private rebuild(): void {
    const all = [...this.servers.values()].flatMap((s) => s.status.tools);
    const { offered, refused } = refuseCollisions(all, this.builtins);
    const pinned = new Set<AttachedTool>();
    for (const s of this.servers.values()) {
      s.status.refused = refused
        .filter((r) => r.tool.server === s.config.name)
        .map((r) => ({ name: r.tool.name, upstream: r.tool.upstream, reason: r.reason }));
      if (s.status.state !== "ready") continue;
      s.status.pins = checkPins(this.pins.of(s.config.name), s.status.tools);
      for (const t of s.status.tools)
        if (s.status.pins.some((p) => p.tool === t.upstream && p.state === "pinned")) pinned.add(t);
    }
    this.offered = offered.filter((t) => pinned.has(t));
    this.byName = new Map(this.offered.map((t) => [t.name, { tool: t, server: this.servers.get(t.server)! }]));
  }

  /** The tools offered now, server by server, in each server's order. */
  tools(): readonly AttachedTool[] {
    return this.offered;
  }

  /**
   * Why a tool of this name is not offered as pinned (`sha256`: as the caller last saw it): refused,
   * new or changed (with the diff), gone; undefined when it is offered as it was.
   */
  whyNot(name: string, sha256?: string): string | undefined {
    const offered = this.byName.get(name);
    if (offered && (sha256 === undefined || offered.tool.sha256 === sha256)) return undefined;
    for (const s of this.servers.values()) {
      const r = s.status.refused.find((x) => x.name === name);
      if (r) return `\`${name}\` of the server \`${s.config.name}\` is not offered: ${r.reason}`;
      const t = s.status.tools.find((x) => x.name === name);
      const check = t && s.status.pins.find((p) => p.tool === t.upstream);
      if (check && check.state !== "pinned")
        return `\`${name}\` is ${check.state === "new" ? "a tool nobody approved yet" : "changed since it was approved"} on the server \`${s.config.name}\`; \`latch servers approve ${s.config.name}\` shows and pins it. The definition, approved → now:\n${check.diff ?? ""}`;
    }
    return sha256 === undefined ? undefined : `\`${name}\` is no longer offered by its server`;
  }

  /**
   * Pin what the server sends now (`latch servers approve`): returns what changed, with the diffs; the
   * caller logs it before this returns to the listeners. A server that is not running cannot be approved.
   */
  async approve(
    name: string,
    logged: (tools: { name: string; sha256: string }[], removed: string[]) => void,
  ): Promise<PinCheck[]> {
    const s = this.servers.get(name);
    if (!s)
      throw new Error(`no server \`${name}\` is attached; the config names: ${[...this.servers.keys()].join(", ")}`);
    await this.load(s);
    if (s.status.state !== "ready") throw new Error(`the server \`${name}\` is not running: ${s.status.error ?? ""}`);
    this.rebuild();
    // A tool refused for its name (taken, or listed twice) is never pinned: approving cannot make it shadow another.
    const approvable = s.status.tools.filter((t) => !s.status.refused.some((r) => r.name === t.name));
    const checks = checkPins(this.pins.of(name), approvable);
    const removed = checks.filter((c) => c.state === "removed").map((c) => c.tool);
    logged(
      approvable.map((t) => ({ name: t.upstream, sha256: t.sha256 })),
      removed,
    );
    this.pins.replace(name, approvable);
    this.rebuild();
    for (const l of [...this.listeners]) l();
    return checks;
  }

  status(): ServerStatus[] {
    return [...this.servers.values()].map((s) => s.status);
  }

  /** Listeners hear when a server's tools changed (its tools/list_changed, read again). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The request an OpenAPI tool makes with these arguments; undefined for an MCP server's tool. */
  requestOf(name: string, args: Record<string, unknown>): { method: string; url: string } | undefined {
    const hit = this.byName.get(name);
    return hit?.server.upstream.requestOf?.(hit.tool.upstream, args);
  }

  /** Call an offered tool; an upstream failure throws UpstreamError, an upstream `isError` comes back as one. */
  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<AttachedResult> {
    const hit = this.byName.get(name);
    if (!hit) throw new UpstreamError("EUPSTREAM", `\`${name}\` is no longer offered by its server`);
    const res = await hit.server.upstream.callTool(hit.tool.upstream, args, signal);
    const shaped = shapeResult(hit.tool, res);
    if (res.isError)
      throw new UpstreamError(
        "EUPSTREAM",
        `the server \`${hit.tool.server}\` answered with an error: ${shaped.text ?? JSON.stringify(shaped.structured ?? "")}`,
      );
    return shaped;
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.servers.values()].map((s) => s.upstream.close()));
    rmSync(this.emptyRoot, { recursive: true, force: true });
    this.pins.close();
  }
}

function attachedOf(config: UpstreamConfig, t: SourceTool): AttachedTool {
  const server = config.name;
  const definition: ToolDefinition = {
    name: t.name,
    description: t.description ?? "",
    inputSchema: t.inputSchema,
    ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    ...(t.annotations ? { annotations: t.annotations } : {}),
    ...(t.operation ? { operation: t.operation } : {}),
  };
  return {
    name: exposedName(server, t.name),
    server,
    kind: config.kind === "openapi" ? "openapi" : "mcp",
    upstream: t.name,
    definition,
    sha256: sha256Json(definition),
  };
}

function shapeResult(tool: AttachedTool, res: CallToolResult): AttachedResult {
  const texts: string[] = [];
  const media: NonNullable<AttachedResult["media"]> = [];
  const other: unknown[] = [];
  for (const b of res.content ?? []) {
    if (b.type === "text") texts.push(b.text);
    else if (b.type === "image") media.push({ type: "image", data: b.data, mimeType: b.mimeType });
    else if (b.type === "resource" && "text" in b.resource) {
      texts.push(`[resource ${b.resource.uri}]\n${b.resource.text}`);
    } else if (b.type === "resource")
      other.push({ type: "resource", uri: b.resource.uri, mimeType: b.resource.mimeType, note: "binary, not shown" });
    else if (b.type === "resource_link") other.push({ type: "resource_link", uri: b.uri, name: b.name });
    else other.push({ type: b.type, note: "not shown" });
  }
  return {
    server: tool.server,
    tool: tool.upstream,
    ...(texts.length ? { text: texts.join("\n") } : {}),
    ...(res.structuredContent !== undefined ? { structured: res.structuredContent } : {}),
    ...(media.length ? { media } : {}),
    ...(other.length ? { other } : {}),
  };
}
