// What a test expects of a call, said once: each helper asserts the call ended that way (printing the
// whole result when it did not) and returns it narrowed, so the test reads its fields without a cast.
import assert from "node:assert/strict";
import type { ErrorCode } from "../../src/errors.js";
import type { CallResult } from "../../src/host/types.js";

/** What a call (host.call, a backend, an MCP result read as JSON) ends with: its status decides the rest. */
type Ending = { status: string };

export type Ok<T = Record<string, any>> = Extract<CallResult, { status: "ok" }> & { result: T };

function fail(out: Ending, wanted: string): never {
  assert.fail(`expected ${wanted}, got ${JSON.stringify(out)}`);
}

/** The call succeeded; its result is read as T (a tool's result is JSON: a wrong shape fails the test's own checks). */
export function expectOk<T = Record<string, any>>(out: Ending): Ok<T> {
  if (out.status !== "ok") fail(out, "status ok");
  return out as Ok<T>;
}

/** The call was refused (by `gate`, when given). */
export function expectRefused<R extends Ending = CallResult>(
  out: R,
  gate?: string,
): Extract<R, { status: "refused" }> & { reason: string; gate?: string } {
  if (out.status !== "refused") fail(out, "status refused");
  const r = out as Extract<R, { status: "refused" }> & { reason: string; gate?: string };
  if (gate !== undefined) assert.equal(r.gate, gate, `refused by ${r.gate}, not ${gate}: ${r.reason}`);
  return r;
}

/** The call failed (with `code`, when given). */
export function expectError<R extends Ending = CallResult>(
  out: R,
  code?: ErrorCode,
): Extract<R, { status: "error" }> & { code: ErrorCode; message: string } {
  if (out.status !== "error") fail(out, "status error");
  const e = out as Extract<R, { status: "error" }> & { code: ErrorCode; message: string };
  if (code !== undefined) assert.equal(e.code, code, e.message);
  return e;
}
