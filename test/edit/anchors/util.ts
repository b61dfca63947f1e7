// Small helpers for the anchor tests: call a tool and unwrap its result, and pick anchors out of an
// anchored read the way a model would.
import assert from "node:assert/strict";
import type { Host } from "../../../src/host/create-host.js";
import type { CallResult } from "../../../src/host/types.js";
import { expectOk } from "../../helpers/expect.js";

export async function ok(host: Host, tool: string, args: unknown, session = "s"): Promise<Record<string, any>> {
  const out = await host.call(tool, args, { session });
  assert.equal(out.status, "ok", `${tool} failed: ${JSON.stringify(out)}`);
  return expectOk(out).result;
}

export async function call(host: Host, tool: string, args: unknown, session = "s"): Promise<CallResult> {
  return host.call(tool, args, { session });
}

/** Line number → `N#ID` from an anchored read's content. */
export function anchorsOf(content: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const row of content.split("\n")) {
    const m = /^(\d+#[0-9A-Z]{4})\|/.exec(row);
    if (m) out.set(Number(m[1].split("#")[0]), m[1]);
  }
  return out;
}

/** Read `path` with anchors in `session`; the line → anchor map. */
export async function readAnchors(host: Host, path: string, session = "s"): Promise<Map<number, string>> {
  const r = await ok(host, "read_file", { path, anchors: true }, session);
  return anchorsOf(r.content);
}
