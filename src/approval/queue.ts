// The approval queue's waiting side: a call that needs a person adds a request to the state store's
// queue (SQLite in the state dir, or a fleet's PostgreSQL: src/store/) and waits for an answer from
// `latch approvals`, the console, or another machine's console. It wakes on the store's notice of a
// change (NOTIFY on PostgreSQL, a commit on SQLite) and reads its row again; it gives up after the
// request's timeoutMs, so a person has a bounded window, and a store that cannot be reached is named.
import os from "node:os";
import { createHash } from "node:crypto";
import type { ApprovalStore, QueuedApproval } from "../store/types.js";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "./approver.js";
import { visibleArgs } from "./visible.js";

/** A safety net under the wake-ups: the row is read at least this often. */
const RECHECK_MS = 1000;

/** The text a person is shown as "what will happen", and whose sha256 an answer must carry. */
export function shownText(q: Pick<QueuedApproval, "diff" | "args">): string {
  return q.diff ?? visibleArgs(q.args);
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface QueueLabel {
  /** The workspace folder the waiting call works in (the queue shows it with the host and session). */
  workspace: string;
  /** Why the store is unreachable now, if it is: named when nobody could answer. */
  down?: () => string | undefined;
}

/** An approver that waits for `latch approvals approve|deny ID` or the console; `onQueued` tells the person the ID. */
export function queueApprover(
  store: ApprovalStore,
  label: QueueLabel,
  onQueued?: (id: string, req: ApprovalRequest) => void,
): Approver {
  return {
    name: "queue",
    async request(req, signal) {
      const id = await store.add({
        tool: req.tool,
        session: req.session,
        reason: req.reason,
        args: req.args,
        ...(req.diff !== undefined ? { diff: req.diff } : {}),
        ...(req.diffNote !== undefined ? { diffNote: req.diffNote } : {}),
        timeoutMs: req.timeoutMs,
        risk: req.risk ?? [],
        scope: req.scope?.label ?? null,
        ...(req.contentSha256 ? { contentSha256: req.contentSha256 } : {}),
        host: os.hostname(),
        workspace: label.workspace,
        shownSha256: sha256Hex(shownText({ diff: req.diff ?? null, args: req.args })),
      });
      onQueued?.(id, req);
      return new Promise<ApprovalAnswer>((resolve, reject) => {
        let done = false;
        let reading = false;
        let again = false;
        const finish = (fn: () => void) => {
          if (done) return;
          done = true;
          clearInterval(timer);
          clearTimeout(limit);
          unwatch();
          signal.removeEventListener("abort", onAbort);
          store.remove(id).catch(() => undefined); // an expired row is dropped by the next list anyway
          fn();
        };
        const onAbort = () => finish(() => reject(new Error("the approval was abandoned")));
        const limit = setTimeout(() => {
          const down = label.down?.();
          finish(() =>
            resolve({
              approved: false,
              by: "latch approvals",
              reason: down
                ? `the approval queue could not be reached (${down}), so nobody could answer approval ${id} within ${Math.round(req.timeoutMs / 1000)} s`
                : `nobody answered \`latch approvals approve ${id}\` within ${Math.round(req.timeoutMs / 1000)} s`,
            }),
          );
        }, req.timeoutMs);
        const read = async () => {
          if (done) return;
          if (reading) return void (again = true);
          reading = true;
          try {
            const a = await store.answerOf(id);
            const st = a?.state;
            if (st === "approved" || st === "approved_session")
              finish(() =>
                resolve({
                  approved: true,
                  by: a?.by ? `${a.by} (approval ${id})` : `latch approvals approve ${id}`,
                  scope: st === "approved_session" ? "session" : "once",
                }),
              );
            else if (st === "denied")
              finish(() =>
                resolve({
                  approved: false,
                  by: a?.by ? `${a.by} (approval ${id})` : `latch approvals deny ${id}`,
                  reason: a?.note ? `a person denied it: ${a.note}` : "a person denied it",
                }),
              );
            else if (st === undefined)
              finish(() =>
                resolve({ approved: false, by: "latch approvals", reason: "the request left the queue unanswered" }),
              );
          } catch {
            // the store is away: the wait goes on, and its end names why (label.down)
          } finally {
            reading = false;
            if (again) {
              again = false;
              void read();
            }
          }
        };
        const unwatch = store.watch((changed) => {
          if (changed === undefined || changed === id) void read();
        });
        const timer = setInterval(() => void read(), RECHECK_MS);
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
        void read();
      });
    },
  };
}
