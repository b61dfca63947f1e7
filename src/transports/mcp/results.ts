// How a host result becomes an MCP tool result: structuredContent for programs, a text rendering for
// the model, isError for refusals and errors. Display data (diffs, stats for people) goes in _meta,
// never into the model's text.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallResult } from "../../host/types.js";

export function toCallToolResult(out: CallResult): CallToolResult {
  if (out.status === "refused") {
    const text = `Refused: ${out.reason}${out.hint ? `\nHint: ${out.hint}` : ""}`;
    return { isError: true, content: [{ type: "text", text }], structuredContent: { ...out } };
  }
  if (out.status === "error") {
    return {
      isError: true,
      content: [{ type: "text", text: `Error ${out.code}: ${out.message}` }],
      structuredContent: { ...out },
    };
  }
  const structured = isRecord(out.result) ? out.result : { result: out.result };
  const result: CallToolResult = {
    content: [{ type: "text", text: renderText(structured) }],
    structuredContent: structured,
  };
  if (out.display) result._meta = { "latch/display": out.display };
  return result;
}

/**
 * Text a model reads well: a result's long text fields (file content, command output) are shown as
 * they are, after one JSON line of the other fields, instead of escaped inside JSON.
 */
function renderText(result: Record<string, unknown>): string {
  const blocks: string[] = [];
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(result)) {
    if (typeof v === "string" && (v.includes("\n") || v.length > 200)) blocks.push(`--- ${k} ---\n${v}`);
    else rest[k] = v;
  }
  return [JSON.stringify(rest), ...blocks].join("\n");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
