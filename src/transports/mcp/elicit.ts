// Approvals for one MCP session. A call that needs a person is settled, in order, by: an earlier
// "allow for this session" whose scope covers it; the client's form (MCP elicitation), which asks an
// explicit choice (allow once / allow for this session / deny, no default); and, when the client
// cannot ask or answers `cancel` (headless clients do, though nobody was asked), the approval queue,
// for a bounded time, so a person can answer in the latch console or with `latch approvals`. A decline
// that comes back faster than anyone could read the request (`codex exec` declines every request at
// once) was given by no person: it is not reported as one, and the queue is asked as for `cancel`.
import { visibleArgs } from "../../approval/visible.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "../../approval/approver.js";
import { consoleLink } from "../../approval/console-link.js";
import { log } from "../log.js";

export interface SessionApproverOptions {
  server: Server;
  /** Seconds to wait on the queue when the client cannot ask or answered cancel; 0: refuse at once. */
  queueWaitS: number;
  /** An approver waiting on the host's approval queue (the state store's); `onQueued` gets the request's id. */
  queue: (onQueued: (id: string) => void) => Approver;
  /** The state dir, for the `latch approvals` line shown to the person. */
  stateDir: string;
  /** A fleet's PostgreSQL (without its password): the queue there is answered with `--state URL`. */
  stateUrl?: string;
  /** Awaited before a form is sent (loads the validator that checks the answer). */
  beforeAsk?: () => Promise<void>;
}

const CHOICES = { allow_once: "Allow once", allow_session: "Allow for this session", deny: "Deny" } as const;
type Choice = keyof typeof CHOICES;
const BY = "the person, in the MCP client";
/** A decline sooner than this after the form went out was not a person reading it. */
export const HUMAN_MIN_MS = 1000;
const DECLINED = "the person declined it";

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
        const sent = Date.now();
        const asked = await askClient(opts.server, req, signal);
        const took = Date.now() - sent;
        if (typeof asked !== "string" && asked.reason === DECLINED && took < HUMAN_MIN_MS) {
          why = `the MCP client declined within ${took} ms, before a person could have read the request (headless clients such as \`codex exec\` decline every request unasked)`;
        } else if (typeof asked !== "string") {
          if (asked.approved && asked.scope === "session") grant(req);
          return asked;
        } else why = asked;
      } else {
        why = "this MCP client cannot ask a person (it offers no elicitation)";
      }
      const waitMs = Math.min(opts.queueWaitS * 1000, req.timeoutMs - (Date.now() - started));
      if (waitMs <= 0)
        return {
          approved: false,
          by: "MCP client",
          reason: `${why}; the call did not wait: with latch mcp --approval-wait SECONDS a call waits that long for a person to answer in the latch console or with \`latch approvals\``,
        };
      let queued = "";
      const answer = await opts
        .queue((id) => {
          queued = id;
          tell(opts, id, req, waitMs, why);
        })
        .request({ ...req, timeoutMs: waitMs }, signal);
      if (answer.approved) {
        if (answer.scope === "session") grant(req);
        return answer;
      }
      const link = consoleLink(opts.stateDir);
      const waited = `it waited as approval ${queued}${link ? ` (latch console: ${link}#approval=${queued})` : ""}`;
      return { ...answer, reason: `${why}, and ${answer.reason ?? "a person denied it"}; ${waited}` };
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
  if (answer.action === "decline") return { approved: false, by: BY, reason: DECLINED };
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

/** Where a person answers approval `id`: the console when one runs for this state dir, and the terminal. */
function whereToAnswer(opts: SessionApproverOptions, id: string): string {
  const url = consoleLink(opts.stateDir);
  const where = opts.stateUrl ? `--state ${opts.stateUrl}` : `--state-dir ${opts.stateDir}`;
  const terminal = `in a terminal: latch approvals ${where} show ${id}, then approve ${id} [--for-session] or deny ${id}`;
  return url
    ? `approval ${id}: answer it in the latch console at ${url}#approval=${id}, or ${terminal}`
    : `approval ${id}: answer it ${terminal}, or in the latch console (\`latch console ${where}\`)`;
}

function tell(opts: SessionApproverOptions, id: string, req: ApprovalRequest, waitMs: number, why: string): void {
  const text = `latch: ${req.tool} waits for approval ${id} (${why}) for ${Math.round(waitMs / 1000)} s; ${whereToAnswer(opts, id)}.`;
  log("warn", text);
  opts.server
    .sendLoggingMessage({ level: "warning", logger: "latch", data: text })
    .catch((err: Error) => log("debug", `log notification not sent: ${err.message}`));
}
