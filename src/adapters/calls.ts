// What the four SDK adapters share (issue 34): latch's tools as plain descriptions (name, text, JSON
// Schema), and the calls of one tool set. With approvals "framework", the SDK's own approval step asks
// the person: its "needs approval?" prepares the call (host.prepare) and keeps the exact diff and
// sha256 under the SDK's tool-call id; the run after a yes carries that sha256 back (host.call), so a
// file that moved since the person looked is refused. A no goes through host.call too, so the deny is
// on latch's log and the model gets latch's reason. With "latch", the host's approver asks inside the
// call and the SDK never asks.
import type { Host } from "../host/create-host.js";
import type { CallResult, Prepared } from "../host/types.js";
import { inputSchema } from "../registry.js";

export interface LatchToolsOptions {
  /** The latch session the calls belong to (read-before-write, background processes); default "default". */
  session?: string;
  /**
   * "framework" (default): the SDK's approval step asks the person, bound to the bytes prepared for them.
   * "latch": the host's approver asks inside each call; the SDK never asks.
   */
  approvals?: "framework" | "latch";
}

/** A call waiting for the person's answer in the SDK's approval step: what to show them. */
export interface PendingApproval extends NonNullable<Prepared["approval"]> {
  callId: string;
  tool: string;
  args: unknown;
  /** Why a person must answer: the deciding gate's reason. */
  reason: string;
}

export interface ToolDescription {
  name: string;
  description: string;
  /** The tool's input as JSON Schema (the registry's, as MCP clients get it). */
  parameters: Record<string, unknown>;
}

/** The calls of one tool set: prepared approvals waiting by the SDK's call id, and display data kept from the model. */
export class LatchCalls {
  readonly session: string;
  readonly approvals: "framework" | "latch";
  // Each kept at most KEPT entries, the oldest dropped first: a long agent run makes thousands of calls,
  // and an SDK that never asks for a call's display data or never runs an approved call must not make
  // the tool set grow without limit. A dropped approval only means the person is asked again.
  private readonly waiting = new Map<string, PendingApproval>();
  private readonly shown = new Map<string, Record<string, unknown>>();
  /** Calls the person said no to: asked again, they still need the approval they did not get. */
  private readonly denied = new Map<string, true>();

  constructor(
    readonly host: Host,
    opts: LatchToolsOptions,
    /** Who answers in the log: "the AI SDK's approval step" … */
    private readonly by: string,
  ) {
    const approvals = opts.approvals ?? "framework";
    if (approvals !== "framework" && approvals !== "latch")
      throw new TypeError(`Expected \`approvals\` to be "framework" or "latch", got \`${String(approvals)}\`.`);
    this.approvals = approvals;
    this.session = opts.session ?? "default";
  }

  /** The host's tools, described for an SDK. */
  describe(): ToolDescription[] {
    return this.host.tools().map((t) => ({ name: t.name, description: t.description, parameters: inputSchema(t) }));
  }

  /** The SDK's "needs approval?": true when a person must answer, with the request kept under `callId`. */
  async needsApproval(callId: string, tool: string, args: unknown): Promise<boolean> {
    if (this.approvals === "latch") return false;
    // An SDK may ask again when the answer comes back (the AI SDK does): the call keeps the request
    // the person saw; preparing anew would bind their answer to bytes they never saw.
    if (this.denied.has(callId) || this.same(this.waiting.get(callId), tool, args)) return true;
    const p = await this.host.prepare(tool, args, { session: this.session });
    if (p.action !== "approve" || !p.approval) return false; // allowed, or refused: the call says why
    keep(this.waiting, callId, { ...p.approval, callId, tool, args, reason: p.reason });
    return true;
  }

  /** What the person must see before answering the SDK's approval request for `callId`. */
  pending(callId: string): PendingApproval | undefined {
    return this.waiting.get(callId);
  }

  /** Run the call; after the SDK's yes, bound to the bytes prepared for the person. */
  async run(callId: string, tool: string, args: unknown, signal?: AbortSignal): Promise<CallResult> {
    const kept = this.take(callId, tool, args);
    const approval = kept ? { id: kept.id, sha256: kept.sha256, answer: "approve" as const, by: this.by } : undefined;
    const r = await this.host.call(tool, args, { session: this.session, signal, ...(approval ? { approval } : {}) });
    if (r.status === "ok" && r.display) keep(this.shown, callId, r.display);
    return r;
  }

  /** The person said no in the SDK's approval step: the deny is logged, and latch's reason comes back for the model. */
  async deny(callId: string, reason?: string): Promise<CallResult> {
    const kept = this.waiting.get(callId);
    this.waiting.delete(callId);
    keep(this.denied, callId, true);
    if (!kept)
      return {
        status: "refused",
        reason: `No approval is waiting for the call \`${callId}\`; nothing ran.`,
        gate: "approval",
      };
    const approval = { id: kept.id, sha256: kept.sha256, answer: "deny" as const, by: this.by, reason };
    return this.host.call(kept.tool, kept.args, { session: this.session, approval });
  }

  /** The display data (a write's diff, counts) of a finished call: for people, never sent to the model. */
  display(callId: string): Record<string, unknown> | undefined {
    return this.shown.get(callId);
  }

  /** The approval kept for this call, if it is the same call (an SDK that re-sends other arguments gets none). */
  private take(callId: string, tool: string, args: unknown): PendingApproval | undefined {
    const kept = this.waiting.get(callId);
    this.waiting.delete(callId);
    return this.same(kept, tool, args) ? kept : undefined;
  }

  private same(kept: PendingApproval | undefined, tool: string, args: unknown): kept is PendingApproval {
    return kept !== undefined && kept.tool === tool && JSON.stringify(kept.args) === JSON.stringify(args);
  }
}

/** How many approvals, display records and denials one tool set keeps (each). */
export const KEPT = 1024;

function keep<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key); // re-inserted at the end: the newest
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value as string);
}

/** What the model reads of a result: the result, or latch's refusal or error as text it can act on. */
export function modelText(r: CallResult): string {
  if (r.status === "ok") return typeof r.result === "string" ? r.result : JSON.stringify(r.result);
  if (r.status === "refused") return `Refused: ${r.reason}${r.hint ? ` ${r.hint}` : ""}`;
  return `Error ${r.code}: ${r.message}`;
}

const SETS = new WeakMap<object, LatchCalls>();

/** Tie a tool set to its calls, for latchApprovals(). */
export function remember<T extends object>(set: T, calls: LatchCalls): T {
  SETS.set(set, calls);
  return set;
}

/** The calls behind a tool set made by latchTools(): pending approvals to show, deny(), display data. */
export function latchApprovals(set: object): LatchCalls {
  const calls = SETS.get(set);
  if (!calls) throw new TypeError("This is not a tool set made by latchTools(): pass the object latchTools returned.");
  return calls;
}
