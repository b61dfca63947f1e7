// An attached OpenAPI service as the gateway sees any upstream: it lists tools (its operations, read
// from the spec file again each time, so `latch servers approve` pins what the file says now) and calls
// them. A call is one request built from the arguments the registry already checked against the
// operation's schema, sent through the guarded fetch (no private address unless the config names the
// host), with the configured auth, bounded in time and in the bytes read; a status of 400 and up is
// an error result. Nothing here decides: the call path did before this runs.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { OpenApiConfig } from "../config/servers.js";
import { readRefs } from "../config/servers.js";
import { GuardRefusal, guardedFetch, type GuardedFetch } from "../web/guarded.js";
import { readOperations, type Operation } from "./openapi.js";
import { UpstreamError, type SourceTool } from "./upstream.js";

export class OpenApiService {
  private ops = new Map<string, Operation>();
  private readonly fetch: GuardedFetch;

  constructor(
    private readonly c: OpenApiConfig,
    private readonly env: Readonly<NodeJS.ProcessEnv>,
  ) {
    // The body is cut at max_response_bytes by the reader below, not failed: the guard's cap is above it.
    this.fetch = guardedFetch({
      table: `[openapi.${c.name}]`,
      privateHosts: c.privateHosts,
      maxBodyBytes: Number.MAX_SAFE_INTEGER,
    });
  }

  /** The auth header's values: secrets of the disclosure gate. */
  static secrets(c: OpenApiConfig, env: Readonly<NodeJS.ProcessEnv>): Record<string, string> {
    const a = c.auth;
    if (!a) return {};
    const refs: Record<string, string> =
      "bearer" in a
        ? { bearer: a.bearer }
        : "value" in a
          ? { value: a.value }
          : { basic_user: a.basicUser, basic_password: a.basicPassword };
    return readRefs(refs, env, `openapi.${c.name}.auth`);
  }

  async listTools(): Promise<SourceTool[]> {
    let ops: Operation[];
    try {
      ops = await readOperations(this.c);
    } catch (err) {
      throw new UpstreamError(
        "EUPSTREAM",
        `the OpenAPI service \`${this.c.name}\` cannot be read: ${(err as Error).message}`,
      );
    }
    this.ops = new Map(ops.map((o) => [o.id, o]));
    return ops.map((o) => ({
      name: o.id,
      description: o.description,
      inputSchema: o.inputSchema as SourceTool["inputSchema"],
      operation: { method: o.method, path: o.path },
    }));
  }

  /** The request a call makes: the effect names it, and the policy programs see it. */
  requestOf(tool: string, args: Record<string, unknown>): { method: string; url: string } | undefined {
    const op = this.ops.get(tool);
    return op ? { method: op.method, url: this.urlOf(op, args).href } : undefined;
  }

  private urlOf(op: Operation, args: Record<string, unknown>): URL {
    let p = op.path;
    for (const place of op.places.filter((x) => x.in === "path"))
      p = p.split(`{${place.name}}`).join(encodeURIComponent(scalar(args[place.arg])));
    const base = this.c.baseUrl.replace(/\/+$/, "");
    const url = new URL(base + p);
    for (const place of op.places.filter((x) => x.in === "query")) {
      const v = args[place.arg];
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(place.name, scalar(item));
    }
    return url;
  }

  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const op = this.ops.get(tool);
    if (!op) throw new UpstreamError("EUPSTREAM", `\`${tool}\` is not an operation of \`${this.c.name}\` now`);
    const headers: Record<string, string> = { accept: "application/json, text/plain;q=0.9, */*;q=0.5" };
    for (const place of op.places.filter((x) => x.in === "header"))
      if (args[place.arg] !== undefined) headers[place.name] = scalar(args[place.arg]);
    Object.assign(headers, this.authHeaders());
    let body: string | undefined;
    const b = op.places.find((x) => x.in === "body");
    if (b && args[b.arg] !== undefined && op.bodyType) {
      headers["content-type"] = op.bodyType;
      body = bodyText(op.bodyType, args[b.arg]);
    }
    const deadline = AbortSignal.timeout(this.c.timeoutS * 1000);
    const both = AbortSignal.any([signal, deadline]);
    try {
      const res = await this.fetch(this.urlOf(op, args), { method: op.method, headers, body, signal: both });
      const { text, cut } = await readCapped(res, this.c.maxResponseBytes);
      const type = res.headers.get("content-type") ?? "";
      const shown = /^(text\/|application\/(.*\+)?(json|xml|yaml|x-www-form-urlencoded))/i.test(type)
        ? text
        : `[${Buffer.byteLength(text)} bytes of ${type || "an unknown type"}, not shown]`;
      const note = cut
        ? `\n[cut by latch: the answer is over ${this.c.maxResponseBytes} bytes (max_response_bytes)]`
        : "";
      return {
        content: [{ type: "text", text: `HTTP ${res.status} ${op.method} ${op.path}\n${shown}${note}` }],
        ...(res.status >= 400 ? { isError: true } : {}),
      };
    } catch (err) {
      if (deadline.aborted && !signal.aborted)
        throw new UpstreamError(
          "ETIMEDOUT",
          `the OpenAPI service \`${this.c.name}\` did not answer within ${this.c.timeoutS} s (timeout_s); nothing more is known of what it did`,
        );
      const why = err instanceof GuardRefusal ? `latch did not send it: ${err.message}` : (err as Error).message;
      throw new UpstreamError("EUPSTREAM", `the OpenAPI service \`${this.c.name}\` failed on \`${tool}\` (${why})`);
    }
  }

  private authHeaders(): Record<string, string> {
    const a = this.c.auth;
    if (!a) return {};
    const v = OpenApiService.secrets(this.c, this.env);
    if ("bearer" in a) return { authorization: `Bearer ${v.bearer}` };
    if ("value" in a) return { [a.header]: v.value };
    return { authorization: `Basic ${Buffer.from(`${v.basic_user}:${v.basic_password}`).toString("base64")}` };
  }

  async close(): Promise<void> {
    // Nothing stays open between calls: each request has its own connection.
  }
}

function scalar(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
}

function bodyText(type: string, v: unknown): string {
  if (type === "application/x-www-form-urlencoded") {
    const form = new URLSearchParams();
    for (const [k, x] of Object.entries(v && typeof v === "object" ? v : {})) form.append(k, scalar(x));
    return form.toString();
  }
  if (type === "text/plain") return scalar(v);
  return JSON.stringify(v);
}

/** The body as text, up to `max` bytes; the rest is not read (the connection is let go). */
async function readCapped(res: Response, max: number): Promise<{ text: string; cut: boolean }> {
  if (!res.body) return { text: "", cut: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = Math.min(value.length, max - total);
    chunks.push(value.subarray(0, take));
    total += take;
    if (take < value.length || total >= max) {
      cut = take < value.length || !(await reader.read()).done;
      break;
    }
  }
  await reader.cancel().catch(() => undefined);
  return { text: Buffer.concat(chunks).toString("utf8"), cut };
}
