// Step 1 of the call path: turn a schema failure into one message that names the argument and the fix.
import type { z } from "zod";
import type { ToolSpec } from "../tools/define.js";

export function describeArgsError(tool: ToolSpec, error: z.ZodError): string {
  const accepted = acceptedKeys(tool);
  // An unknown key usually is a misspelt known one: report it first, so the fix is obvious.
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0];
  const key = issue.path.map(String).join(".") || "arguments";
  const got = (issue as { input?: unknown }).input;
  const shown = got === undefined ? "nothing" : `\`${truncate(JSON.stringify(got))}\``;
  switch (issue.code) {
    case "unrecognized_keys":
      return `Unknown argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")} for ${tool.name}; it accepts: ${accepted}.`;
    case "invalid_type":
      if (got === undefined)
        return `Missing required argument \`${key}\` for ${tool.name} (a ${issue.expected}); it accepts: ${accepted}.`;
      return `Expected \`${key}\` to be ${article(issue.expected)}, got ${shown}.`;
    case "too_small":
      return `Expected \`${key}\` to be ${issue.origin === "string" ? `a string of at least ${issue.minimum} character${issue.minimum === 1 ? "" : "s"}` : `at least ${issue.minimum}`}, got ${shown}.`;
    case "too_big":
      return `Expected \`${key}\` to be ${issue.origin === "string" ? `at most ${issue.maximum} characters` : `at most ${issue.maximum}`}, got ${shown}.`;
    default:
      return `Invalid \`${key}\` for ${tool.name}: ${issue.message}; got ${shown}.`;
  }
}

function acceptedKeys(tool: ToolSpec): string {
  const shape = (tool.schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape).join(", ") : "see `latch tools`";
}

function article(t: string): string {
  if (t === "int") return "an integer";
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

function truncate(s: string | undefined): string {
  if (s === undefined) return "undefined";
  return s.length > 80 ? s.slice(0, 77) + "..." : s;
}

/**
 * Arguments that MCP clients add to every tool call on their own, not the model's: accepted and
 * dropped (and logged) by the MCP transport, so a strict schema does not refuse the whole call. Any
 * other unknown argument is still refused. Keep this list short and name the client.
 */
export const CLIENT_ARGUMENTS: Readonly<Record<string, string>> = {
  // Gemini CLI (0.x) adds it to every tool's schema and tells the model to set it.
  wait_for_previous: "Gemini CLI",
};

/** Split a call's arguments into the model's and the known client-injected ones the tool does not take. */
export function dropClientArguments(tool: ToolSpec | undefined, args: unknown): { args: unknown; dropped: string[] } {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { args, dropped: [] };
  const shape = (tool?.schema as unknown as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(args)) {
    if (Object.hasOwn(CLIENT_ARGUMENTS, k) && !Object.hasOwn(shape, k)) dropped.push(k);
    else kept[k] = v;
  }
  return { args: dropped.length ? kept : args, dropped };
}
