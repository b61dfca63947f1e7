// How a host result becomes an MCP tool result. The text block is what the model reads: some clients
// (Claude Code) show the model `structuredContent` instead of the text whenever it is present, JSON
// escaped, so it is set only for a tool that declares an outputSchema (none does today), and the text
// carries file contents and command output verbatim. Display data (diffs, stats for people) goes in
// _meta, never into the model's text.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallResult } from "../../host/types.js";
import { isObject } from "./rpc.js";

/** Result fields that are file contents or program output: always shown as they are, never JSON-escaped. */
const VERBATIM = new Set(["content", "stdout", "stderr", "results", "entries", "text", "output", "preview", "diff"]);

interface MediaBlock {
  type: "image";
  data: string;
  mimeType: string;
}

export interface ResultOptions {
  /** The tool declares an outputSchema: the spec then asks for structuredContent on every success. */
  structured?: boolean;
}

export function toCallToolResult(out: CallResult, opts: ResultOptions = {}): CallToolResult {
  if (out.status === "refused") {
    const text = `Refused: ${out.reason}${out.hint ? `\nHint: ${out.hint}` : ""}`;
    return { isError: true, content: [{ type: "text", text }] };
  }
  if (out.status === "error") {
    return { isError: true, content: [{ type: "text", text: `Error ${out.code}: ${out.message}` }] };
  }
  const all = isObject(out.result) ? out.result : { result: out.result };
  // read_media's images go to the model as image content, not as base64 in the text.
  const { media, ...fields } = all as Record<string, unknown> & { media?: MediaBlock[] };
  const result: CallToolResult = { content: [{ type: "text", text: renderText(fields) }] };
  if (Array.isArray(media))
    for (const m of media) result.content.push({ type: "image", data: m.data, mimeType: m.mimeType });
  if (opts.structured) result.structuredContent = fields;
  if (out.display) result._meta = { "latch/display": out.display };
  return result;
}

/**
 * Text a model reads well: one JSON line of the small fields, then each content or output field as
 * it is, under a `--- name ---` line (so quotes, backslashes and tabs reach the model unescaped).
 */
function renderText(result: Record<string, unknown>): string {
  const blocks: string[] = [];
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(result)) {
    const verbatim = typeof v === "string" && v !== "" && (VERBATIM.has(k) || v.includes("\n") || v.length > 200);
    if (verbatim) blocks.push(`--- ${k} ---\n${v}`);
    else rest[k] = v;
  }
  return [JSON.stringify(rest), ...blocks].join("\n");
}
