// tools/call over stdio without the SDK's Protocol: a call whose message has exactly the plain shape
// (checked by hand below) goes from the wire to the session's callTool and its answer back to the
// wire. The SDK's way checks each call against two zod schemas (the wire's and the SDK's), and builds
// a request context and a promise chain per call: ~45% of latch's CPU per read of a 4 KB file over
// stdio (bench/RESULTS.md, "Reads and edits near the floor"). Anything else, and any call of another
// shape, still goes through the SDK, which answers it or says what is wrong with it. The answer is
// the same either way: the SDK's error form, no answer to a call the client cancelled, progress while
// the call runs.
import { RELATED_TASK_META_KEY, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpSession } from "./server.js";
import { errorOf, isId, isObject, type Id } from "./rpc.js";

type CallParams = Parameters<McpSession["callTool"]>[0];
type Send = (message: JSONRPCMessage) => Promise<void>;

export class DirectCalls {
  /** The calls running, by request id: a client's notifications/cancelled aborts one. */
  private readonly running = new Map<Id, Running>();

  constructor(
    private readonly callTool: McpSession["callTool"],
    private readonly send: Send,
  ) {}

  /**
   * Takes a parsed message if it is a plain tools/call (true: it is served here, answered later);
   * a cancellation aborts the call it names here and still goes on to the SDK, for the requests it runs.
   */
  take(message: Record<string, unknown>): boolean {
    if (message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (isId(id)) this.running.get(id)?.cancel((message.params as { reason?: unknown }).reason);
      return false;
    }
    const call = plainCall(message);
    if (!call) return false;
    this.start(call.id, call.params);
    return true;
  }

  private start(id: Id, params: CallParams): void {
    // No AbortController of its own: the host's cancels the call (CallOptions.cancel).
    const run = new Running();
    this.running.set(id, run);
    const notify = (n: { method: string; params?: unknown }): Promise<void> =>
      run.cancelled ? Promise.resolve() : this.send({ jsonrpc: "2.0", ...n } as JSONRPCMessage);
    this.callTool(params, { cancel: (abort) => run.adopt(abort), notify })
      .then(
        (result) => ({ jsonrpc: "2.0" as const, id, result }),
        (err: unknown) => ({ jsonrpc: "2.0" as const, id, error: errorOf(err) }),
      )
      .then((answer) => {
        if (this.running.get(id) === run) this.running.delete(id);
        // A cancelled request is not answered (the spec's "SHOULD NOT"; the SDK does the same).
        if (!run.cancelled) return this.send(answer);
      })
      .catch(() => undefined); // send never rejects: a broken stdout is the wire's onfault
  }
}

/** One call's cancellation: asked for before the host has started the call, it is handed on when it does. */
class Running {
  cancelled = false;
  private reason: unknown;
  private abort?: (reason?: unknown) => void;

  cancel(reason?: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.reason = reason;
    this.abort?.(reason);
  }

  adopt(abort: (reason?: unknown) => void): void {
    this.abort = abort;
    if (this.cancelled) abort(this.reason);
  }
}

/**
 * The plain tools/call request, `{jsonrpc: "2.0", id, method: "tools/call", params: {name, arguments?,
 * _meta?}}`, with nothing else in it and every part of the type the schemas ask: what both schemas
 * would pass unchanged. Any other shape (a task, an odd progress token, a bad id) is left to them.
 */
export function plainCall(m: Record<string, unknown>): { id: Id; params: CallParams } | undefined {
  if (m.jsonrpc !== "2.0" || m.method !== "tools/call" || !isId(m.id)) return undefined;
  for (const k in m) if (k !== "jsonrpc" && k !== "id" && k !== "method" && k !== "params") return undefined;
  const p = m.params;
  if (!isObject(p) || typeof p.name !== "string") return undefined;
  for (const k in p) if (k !== "name" && k !== "arguments" && k !== "_meta") return undefined;
  if (p.arguments !== undefined && !isObject(p.arguments)) return undefined;
  if (p._meta !== undefined) {
    if (!isObject(p._meta)) return undefined;
    const token = p._meta.progressToken;
    if (token !== undefined && !isId(token)) return undefined;
    if (RELATED_TASK_META_KEY in p._meta) return undefined; // the SDK ties its notifications to the task
  }
  return { id: m.id, params: p as CallParams };
}
