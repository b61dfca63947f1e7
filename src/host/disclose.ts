// Step 8a, disclose (issue 29): authorization to run is not authorization to disclose. Whatever a call
// returns (its result and display data, an error message, a refusal's reason and hint) passes here
// before it is logged, bounded, shaped or returned; so do approval requests before an approver sees
// them. The scanner's findings meet the envelope's `[disclosure]` mode for the tool and the answers
// of the policy programs that asked to see results; the strictest wins. A scanner failure withholds.
import { createHash } from "node:crypto";
import type { Approver } from "../approval/approver.js";
import { DisclosureScanError, type DisclosureScanner, type RuleFindings } from "../disclose/scanner.js";
import { PLACEHOLDER_PREFIX } from "../disclose/scan.js";
import type { DisclosureMode, Envelope } from "../policy/envelope.js";
import {
  envelopeDisclosure,
  programDisclosures,
  strictestDisclosure,
  type DisclosureVerdict,
} from "../policy/disclosure.js";
import type { PolicyProgram } from "../policy/programs.js";
import type { CallResult } from "./types.js";

/** What a result says about its disclosure, and what the policy log records (no secret in either). */
interface DisclosureSummary {
  action: DisclosureMode;
  findings: { rule: string; count: number }[];
  reason?: string;
}

export interface DisclosureRecord extends DisclosureSummary {
  origin: string;
  /** Keyed fingerprints of each secret (HMAC-SHA256 with the state dir's key), by rule. */
  fingerprints: Record<string, string[]>;
}

export interface DiscloseQuery {
  scanner: DisclosureScanner;
  envelope: Envelope;
  tool: string;
  session: string;
  effect?: Record<string, unknown>;
  /** The programs that asked (`"disclose": true`) in the execute phase. */
  programs?: readonly PolicyProgram[];
  evidence?: boolean;
  /** Why the quarantined files' values could not be listed for the scan (their walk failed): nothing is shown. */
  unlisted?: string;
}

/** The result as it may leave latch, and the record of what was done. */
export async function disclose(
  q: DiscloseQuery,
  out: CallResult,
): Promise<{ shown: CallResult; record?: DisclosureRecord }> {
  // A result that passed the gate before (it never does twice) is scanned without its old summary.
  const body: Omit<CallResult, "disclosure"> = { ...out };
  delete (body as { disclosure?: unknown }).disclosure;
  let findings: RuleFindings[];
  let redacted: unknown;
  const unchecked = (why: string) => {
    const reason = `${why}; latch withholds what it could not check (fails closed)`;
    const record: DisclosureRecord = { action: "withhold", findings: [], reason, origin: "scanner", fingerprints: {} };
    return { shown: withheld(out, record), record };
  };
  if (q.unlisted !== undefined) return unchecked(q.unlisted);
  try {
    ({ findings, redacted } = await q.scanner.scan(body));
  } catch (err) {
    if (!(err instanceof DisclosureScanError)) throw err;
    return unchecked(err.message);
  }
  const verdicts: DisclosureVerdict[] = [];
  if (findings.length) verdicts.push(envelopeDisclosure(q.envelope, q.tool));
  if (q.programs?.length) {
    const raw = JSON.stringify(body) ?? "";
    const said = await programDisclosures(q.programs, {
      phase: "disclose",
      tool: q.tool,
      session: q.session,
      effect: q.effect ?? {},
      findings: findings.map(({ rule, count, ranges }) => ({ rule, count, ranges })),
      status: out.status,
      bytes: Buffer.byteLength(raw),
      sha256: createHash("sha256").update(raw).digest("hex"),
      ...(q.evidence ? { result: redacted } : {}),
    });
    for (const v of said) verdicts.push(v);
  }
  if (verdicts.length === 0) return { shown: out };
  const v = strictestDisclosure(verdicts);
  const record: DisclosureRecord = {
    action: v.mode,
    findings: findings.map(({ rule, count }) => ({ rule, count })),
    reason: v.reason,
    origin: v.origin,
    fingerprints: Object.fromEntries(findings.map((f) => [f.rule, f.fingerprints])),
  };
  const summary: DisclosureSummary = { action: v.mode, findings: record.findings };
  if (v.mode === "withhold") return { shown: withheld(out, record), record };
  const shown = (v.mode === "redact" ? redacted : body) as CallResult;
  if (findings.length === 0 && v.mode === "allow") return { shown: out, record };
  return { shown: withSummary(shown, summary), record };
}

function describe(record: DisclosureSummary): string {
  const n = record.findings.reduce((s, f) => s + f.count, 0);
  return n ? `${n} finding${n === 1 ? "" : "s"}: ${record.findings.map((f) => f.rule).join(", ")}` : "";
}

/** The call's status is kept; its content is replaced by what happened and why. */
function withheld(out: CallResult, record: DisclosureRecord): CallResult {
  const counted = describe(record);
  const why = [counted, record.reason].filter(Boolean).join("; ");
  const summary: DisclosureSummary = {
    action: "withhold",
    findings: record.findings,
    ...(record.reason ? { reason: record.reason } : {}),
  };
  const text = `completed, output withheld (${why})`;
  if (out.status === "ok")
    return { status: "ok", result: { withheld: text, disclosure: summary }, disclosure: summary };
  if (out.status === "error")
    return {
      status: "error",
      code: out.code,
      message: `The call failed; its message was withheld (${why}).`,
      disclosure: summary,
    };
  return {
    status: "refused",
    reason: `Refused; the reason was withheld (${why}).`,
    gate: out.gate,
    disclosure: summary,
  };
}

/** The result says what was done: ok results in their own fields (what the model reads), else in the message. */
function withSummary(out: CallResult, summary: DisclosureSummary): CallResult {
  const note = `[latch ${summary.action === "redact" ? "redacted" : "found"} ${describe(summary)}]`;
  if (out.status === "ok") {
    const result =
      out.result !== null && typeof out.result === "object" && !Array.isArray(out.result)
        ? { ...(out.result as Record<string, unknown>), disclosure: summary }
        : { result: out.result, disclosure: summary };
    return { ...out, result, disclosure: summary };
  }
  if (out.status === "error") return { ...out, message: `${out.message} ${note}`, disclosure: summary };
  return { ...out, reason: `${out.reason} ${note}`, disclosure: summary };
}

/** An argument holding a placeholder latch wrote in place of a secret: the call is refused before it plans. */
export function placeholderIn(args: unknown): string | undefined {
  const s = JSON.stringify(args) ?? "";
  const at = s.indexOf(PLACEHOLDER_PREFIX);
  if (at === -1) return undefined;
  const end = s.indexOf("]", at);
  return s.slice(at, end === -1 ? at + 40 : end + 1);
}

/**
 * The approver sees the request with secrets redacted (its diff, both sides of a change, the
 * arguments): a person's screen and an MCP client's form are outside latch too. The binding to the
 * exact bytes (contentSha256) is not touched. A failed scan makes the request fail: a deny.
 */
export function screenedApprover(approver: Approver, scanner: DisclosureScanner): Approver {
  return {
    name: approver.name,
    async request(req, signal) {
      const { timeoutMs, contentSha256, ...shown } = req;
      const { redacted, findings } = await scanner.scan(shown, "approval");
      if (findings.length === 0) return approver.request(req, signal);
      const n = findings.reduce((s, f) => s + f.count, 0);
      const safe = redacted as typeof shown;
      const note = `latch redacted ${n} secret${n === 1 ? "" : "s"} from this request (${findings.map((f) => f.rule).join(", ")})`;
      return approver.request(
        {
          ...safe,
          timeoutMs,
          ...(contentSha256 ? { contentSha256 } : {}),
          diffNote: safe.diffNote ? `${safe.diffNote}; ${note}` : note,
        },
        signal,
      );
    },
  };
}
