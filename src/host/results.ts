// A refusal or an error as a call's result: the one shape every step of the call path answers with.
import { Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import type { CallResult } from "./types.js";

export function refused(r: Refusal): CallResult {
  return { status: "refused", reason: r.reason, ...(r.hint ? { hint: r.hint } : {}), gate: r.gate };
}

export function asError(err: unknown): CallResult {
  if (err instanceof ToolError) return { status: "error", code: err.code, message: err.message };
  const raw = errnoCode(err);
  const message = err instanceof Error ? err.message : String(err);
  // A system error's own code when it is one of ours (its message names the rest), else EIO.
  return {
    status: "error",
    code: raw ? ioCode(raw) : "EINTERNAL",
    message: raw ? message : `latch failed unexpectedly: ${message}`,
  };
}
