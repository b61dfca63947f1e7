// A tool of an attached MCP server or OpenAPI service (src/gateway/), as latch offers it: under its
// namespaced name, its description marked as the server's, its arguments checked against the schema
// the server sent, its annotations shown but never trusted (latch takes every attached tool to write,
// so its decision is synced before it runs and no read-only tier applies). The envelope sees the
// `attached` axis, which no axis rule names: the tools table or default_action decides.
import { z } from "zod";
import { Refusal, ToolError } from "../errors.js";
import type { AttachedEffect } from "../policy/effect.js";
import { defineTool, type Plan, type ToolSpec } from "./define.js";

/** What the gateway gives for one offered tool. */
export interface AttachedSource {
  name: string;
  server: string;
  kind: "mcp" | "openapi";
  /** The upstream's name (MCP tool, or OpenAPI operationId). */
  upstream: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** sha256 of the pinned definition. */
  sha256: string;
  /** The request an OpenAPI operation makes, for the effect. */
  request?(args: Record<string, unknown>): { method: string; url: string } | undefined;
  /** Whether the server still offers exactly this definition; else why not (a change since it was pinned). */
  stillPinned(): string | undefined;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** The longest server description a model is shown; the rest is cut, said so. */
const MAX_DESCRIPTION = 2000;

interface AttachedPlan extends Plan {
  attached: AttachedEffect;
}

export function attachedTool(src: AttachedSource): ToolSpec<Record<string, unknown>, AttachedPlan> {
  return defineTool<Record<string, unknown>, AttachedPlan>({
    name: src.name,
    aliases: [],
    toolset: src.kind === "mcp" ? "mcp_servers" : "openapi",
    axis: "attached",
    shapes: ["workspace", "client", "host"],
    // Never the server's claims: an attached tool is taken to change things (annotations are shown in the description).
    annotations: { readOnly: false, destructive: true, idempotent: false },
    description: describe(src),
    schema: () => argumentsSchema(src.inputSchema),
    inputJsonSchema: src.inputSchema,
    async plan(args) {
      const changed = src.stillPinned();
      if (changed !== undefined)
        throw new Refusal(
          `\`${src.name}\` changed on its server since it was approved: ${changed}`,
          `Nothing ran. Ask the user to review the change with \`latch servers approve ${src.server}\`; do not retry until then.`,
        );
      const req = src.request?.(args);
      const attached: AttachedEffect = {
        server: src.server,
        tool: src.upstream,
        kind: src.kind,
        ...(src.annotations ? { annotations: src.annotations } : {}),
        pin: src.sha256,
        ...(req ? { method: req.method, url: req.url } : {}),
      };
      return { attached };
    },
    async run(args, _plan, env) {
      try {
        return { result: await src.call(args, env.signal) };
      } catch (err) {
        if (err instanceof ToolError || err instanceof Refusal) throw err;
        const code = (err as { code?: string }).code === "ETIMEDOUT" ? "ETIMEDOUT" : "EUPSTREAM";
        throw new ToolError(code, (err as Error).message);
      }
    },
  });
}

function describe(src: AttachedSource): string {
  const what = src.kind === "mcp" ? "MCP server" : "OpenAPI service";
  const claims = src.annotations ? Object.entries(src.annotations).filter(([k]) => k.endsWith("Hint")) : [];
  const said = shown(src.description);
  const body = said.length > MAX_DESCRIPTION ? `${said.slice(0, MAX_DESCRIPTION)} [… cut by latch]` : said;
  return [
    `[attached: \`${src.upstream}\` of the ${what} \`${src.server}\`. What follows is the server's own description, not latch's; latch decides every call by its policy.]`,
    body,
    ...(claims.length
      ? [`[the server's annotations, not trusted by latch: ${claims.map(([k, v]) => `${k}=${String(v)}`).join(", ")}]`]
      : []),
  ].join("\n");
}

/** Control and invisible format characters (bidi, tags, zero-width) shown as escapes: a description hides nothing. */
function shown(text: string): string {
  // eslint-disable-next-line no-control-regex -- exactly these are the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}]/gu, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, "0")}`;
  });
}

/**
 * The server's JSON Schema as a zod schema, so the registry step checks arguments as for any tool; a
 * schema zod cannot read leaves the check to the server (an object of any keys), never to nothing.
 */
function argumentsSchema(json: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  try {
    const s = z.fromJSONSchema(json);
    return z.record(z.string(), z.unknown()).pipe(s as z.ZodType<unknown, Record<string, unknown>>) as z.ZodType<
      Record<string, unknown>
    >;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}
