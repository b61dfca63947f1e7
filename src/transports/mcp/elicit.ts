// Approvals for one MCP session. A call that needs a person is settled, in order, by: an earlier
// "allow for this session" whose scope covers it; the client's form (MCP elicitation), which asks an
// explicit choice (allow once / allow for this session / deny, no default); and, when the client
// cannot ask or answers `cancel` (headless clients do, though nobody was asked), the approval queue,
// for a bounded time, so a person can answer with `latch approvals` in a terminal.
import { visibleArgs } from "../../approval/visible.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "../../approval/approver.js";
import { queueApprover, type ApprovalQueue } from "../../approval/queue.js";
import { log } from "../log.js";

export interface SessionApproverOptions {
  server: Server;
  /** Seconds to wait on the queue when the client cannot ask or answered cancel; 0: refuse at once. */
  queueWaitS: number;
  /** The state dir's queue, opened when first needed. */
  queue: () => ApprovalQueue;
  /** The state dir, for the `latch approvals` line shown to the person. */
  stateDir: string;
  /** Awaited before a form is sent (loads the validator that checks the answer). */
  beforeAsk?: () => Promise<void>;
}

const CHOICES = { allow_once: "Allow once", allow_session: "Allow for this session", deny: "Deny" } as const;
type Choice = keyof typeof CHOICES;
const BY = "the person, in the MCP client";

export function sessionApprover(opts: SessionApproverOptions): Approver {
  const grants = new Set<string>();
  const grant = (req: ApprovalRequest) => req.scope?.keys.forEach((k) => grants.add(k));
  return {
    name: "mcp",
    async request(req, signal) {
      if (req.scope && req.scope.keys.every((k) => grants.has(k)))
        return { approved: true, by: "an approval given earlier in this session", scope: "session" };
      const started = Date.now();
      let why: string;
      if (opts.server.getClientCapabilities()?.elicitation) {
        await opts.beforeAsk?.();
        const asked = await askClient(opts.server, req, signal);
        if (typeof asked !== "string") {
          if (asked.approved && asked.scope === "session") grant(req);
          return asked;
        }
        why = asked;
      } else {
        why = "this MCP client cannot ask a person (it offers no elicitation)";
      }
      const waitMs = Math.min(opts.queueWaitS * 1000, req.timeoutMs - (Date.now() - started));
      if (waitMs <= 0)
        return {
          approved: false,
          by: "MCP client",
          reason: `${why}; a person can answer from a terminal with \`latch approvals\` when latch mcp runs with --approval-wait SECONDS`,
        };
      const answer = await queueApprover(opts.queue(), (id) => tell(opts, id, req, waitMs, why)).request(
        { ...req, timeoutMs: waitMs },
        signal,
      );
      if (answer.approved) {
        if (answer.scope === "session") grant(req);
        return answer;
      }
      return { ...answer, reason: `${why}, and ${answer.reason ?? "a person denied it"}` };
    },
  };
}

/** The client's answer, or why there is none (a string): then the queue is asked. */
async function askClient(server: Server, req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | string> {
  const choices: Choice[] = req.scope ? ["allow_once", "allow_session", "deny"] : ["allow_once", "deny"];
  // The request is cancelled (notifications/cancelled) only while it is unanswered: once the client
  // has answered, the caller's signal is unhooked, so its later abort sends nothing.
  const ctl = new AbortController();
  const forward = () => ctl.abort(signal.reason);
  signal.addEventListener("abort", forward, { once: true });
  let answer;
  try {
    answer = await server.elicitInput(
      {
        mode: "form",
        message: promptText(req),
        requestedSchema: {
          type: "object",
          properties: {
            decision: {
              type: "string",
              title: "Your decision",
              description: req.scope ? `"For this session" also allows: ${req.scope.label}` : "This call only",
              enum: choices,
              enumNames: choices.map((c) =>
                c === "allow_session" ? `${CHOICES[c]} (${req.scope!.label})` : CHOICES[c],
              ),
            },
          },
          required: ["decision"],
        },
      },
      { signal: ctl.signal, timeout: req.timeoutMs },
    );
  } catch (err) {
    if (signal.aborted) throw err;
    return `the MCP client's approval prompt failed (${(err as Error).message})`;
  } finally {
    signal.removeEventListener("abort", forward);
  }
  if (answer.action === "decline") return { approved: false, by: BY, reason: "the person declined it" };
  if (answer.action === "cancel")
    return "the MCP client answered `cancel`: the prompt was dismissed, or the client does not show approval requests (headless runs)";
  const decision = answer.content?.decision as Choice | undefined;
  if (decision === "deny") return { approved: false, by: BY, reason: "the person chose deny" };
  if (decision === "allow_once") return { approved: true, by: BY, scope: "once" };
  if (decision === "allow_session" && req.scope) return { approved: true, by: BY, scope: "session" };
  return `the MCP client accepted the form without a choice (${JSON.stringify(answer.content ?? null)})`;
}

function promptText(req: ApprovalRequest): string {
  return [
    `latch: the model wants to run ${req.tool}, which needs your approval.`,
    `Why: ${req.reason}`,
    `Risk: ${req.risk?.length ? req.risk.join(", ") : "none named"}`,
    req.diff ? `\n${req.diff}` : req.diffNote ? `(${req.diffNote})` : `Arguments: ${visibleArgs(req.args, 2000)}`,
  ].join("\n");
}

function tell(opts: SessionApproverOptions, id: string, req: ApprovalRequest, waitMs: number, why: string): void {
  const text = `latch: ${req.tool} waits for approval ${id} (${why}). In a terminal: latch approvals --state-dir ${opts.stateDir} show ${id}, then approve ${id} [--for-session] or deny ${id}, within ${Math.round(waitMs / 1000)} s.`;
  log("warn", text);
  opts.server
    .sendLoggingMessage({ level: "warning", logger: "latch", data: text })
    .catch((err: Error) => log("debug", `log notification not sent: ${err.message}`));
}
