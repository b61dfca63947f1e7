// The two ways a call can end without a result. A Refusal is a normal answer the model can act on
// (policy, preconditions); a ToolError is a failure with a stable code and a message that names the fix.
// Both are caught by the host by class, never by a bare catch, so a denial is never turned into an error.

import type { Gate } from "./policy/decision.js";
export type { Gate } from "./policy/decision.js";

export class Refusal extends Error {
  readonly reason: string;
  readonly hint?: string;
  readonly gate: Gate;
  constructor(reason: string, hint?: string, gate: Gate = "toolset") {
    super(reason);
    this.name = "Refusal";
    this.reason = reason;
    this.hint = hint;
    this.gate = gate;
  }
}

export class ToolError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "ToolError";
    this.code = code;
  }
}

/** One template for every bad-value message: "Expected `timeout` to be a non-negative integer, got `-1`". */
export function expected(name: string, what: string, got: unknown): string {
  return `Expected \`${name}\` to be ${what}, got \`${typeof got === "string" ? got : JSON.stringify(got)}\``;
}

/** The code of a node system error, or undefined for anything else. */
export function errnoCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && typeof (err as { code?: unknown }).code === "string"
    ? (err as { code: string }).code
    : undefined;
}

export function cancelled(): ToolError {
  return new ToolError(
    "ECANCELED",
    "The call was cancelled before it finished; nothing was changed. Retry it if you still need it.",
  );
}
