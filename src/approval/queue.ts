// Pending approvals in the state DB (latch.db, table `approvals`): a waiting call adds a row and polls
// it; `latch approvals approve ID` from another terminal answers it. Rows are removed when answered
// or abandoned, so the queue shows only calls that are waiting now. A waiting call gives up after its
// request's timeoutMs, so a person has a bounded window to answer.
import type Database from "better-sqlite3";
import { openStateDb } from "../fs/db.js";
import { randomBytes } from "node:crypto";
import type { ApprovalAnswer, ApprovalRequest, Approver } from "./approver.js";

export interface QueuedApproval {
  id: string;
  tool: string;
  session: string;
  reason: string;
  args: unknown;
  diff: string | null;
  diff_note: string | null;
  state: "pending" | "approved" | "approved_session" | "denied";
  /** What is at stake, and what "for this session" would cover (none: only once). */
  risk: string[];
  scope: string | null;
  /** The sha256 of each file's content the diff was made from (null: a new file): the write lands only on it. */
  content_sha256: Record<string, string | null> | null;
  created_at: string;
  expires_at: string;
  pid: number;
}

const POLL_MS = 200;

export class ApprovalQueue {
  private readonly db: Database.Database;

  constructor(dbFile: string) {
    this.db = openStateDb(dbFile);
  }

  add(req: ApprovalRequest): string {
    const id = randomBytes(4).toString("hex");
    const now = Date.now();
    this.db
      .prepare(
        "INSERT INTO approvals (id, tool, session, reason, args, diff, diff_note, state, created_at, expires_at, pid, meta) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
      )
      .run(
        id,
        req.tool,
        req.session,
        req.reason,
        JSON.stringify(req.args),
        req.diff ?? null,
        req.diffNote ?? null,
        now,
        now + req.timeoutMs,
        process.pid,
        JSON.stringify({
          risk: req.risk ?? [],
          scope: req.scope?.label ?? null,
          content_sha256: req.contentSha256 ?? null,
        }),
      );
    return id;
  }

  /** Waiting requests; expired ones are dropped first. */
  list(): QueuedApproval[] {
    this.db.prepare("DELETE FROM approvals WHERE expires_at < ?").run(Date.now());
    return (this.db.prepare("SELECT * FROM approvals ORDER BY created_at").all() as Record<string, unknown>[]).map(
      toQueued,
    );
  }

  get(id: string): QueuedApproval | undefined {
    const row = this.db.prepare("SELECT * FROM approvals WHERE id = ? AND expires_at >= ?").get(id, Date.now()) as
      Record<string, unknown> | undefined;
    return row ? toQueued(row) : undefined;
  }

  /**
   * Answer a pending request; false when there is no such pending request (or no session scope to
   * grant). One UPDATE guarded by `state = 'pending'`: of two answers at once (two terminals, two
   * console tabs), exactly one wins. `who` says where the person answered and carries a deny's note.
   */
  answer(
    id: string,
    approved: boolean,
    scope: "once" | "session" = "once",
    who: { by?: string; note?: string } = {},
  ): boolean {
    const state = !approved ? "denied" : scope === "session" ? "approved_session" : "approved";
    const sessionOk = scope === "once" ? "" : " AND json_extract(meta, '$.scope') IS NOT NULL";
    const r = this.db
      .prepare(
        `UPDATE approvals SET state = ?, meta = json_set(coalesce(meta, '{}'), '$.answered_by', ?, '$.note', ?) WHERE id = ? AND state = 'pending' AND expires_at >= ?${sessionOk}`,
      )
      .run(state, who.by ?? null, who.note ?? null, id, Date.now());
    return r.changes === 1;
  }

  state(id: string): QueuedApproval["state"] | undefined {
    return this.answerOf(id)?.state;
  }

  /** The request's state, and for an answered one where the person answered and their note. */
  answerOf(id: string): { state: QueuedApproval["state"]; by?: string; note?: string } | undefined {
    const row = this.db
      .prepare(
        "SELECT state, json_extract(meta, '$.answered_by') AS by, json_extract(meta, '$.note') AS note FROM approvals WHERE id = ?",
      )
      .get(id) as { state: QueuedApproval["state"]; by: string | null; note: string | null } | undefined;
    if (!row) return undefined;
    return { state: row.state, ...(row.by ? { by: row.by } : {}), ...(row.note ? { note: row.note } : {}) };
  }

  /** Changes when another connection (another latch process) commits: a cheap "anything new?" to poll. */
  version(): number {
    return this.db.pragma("data_version", { simple: true }) as number;
  }

  remove(id: string): void {
    this.db.prepare("DELETE FROM approvals WHERE id = ?").run(id);
  }

  close(): void {
    this.db.close();
  }
}

function toQueued(r: Record<string, unknown>): QueuedApproval {
  return {
    id: String(r.id),
    tool: String(r.tool),
    session: String(r.session),
    reason: String(r.reason),
    args: JSON.parse(String(r.args)),
    diff: (r.diff as string | null) ?? null,
    diff_note: (r.diff_note as string | null) ?? null,
    state: r.state as QueuedApproval["state"],
    created_at: new Date(Number(r.created_at)).toISOString(),
    expires_at: new Date(Number(r.expires_at)).toISOString(),
    pid: Number(r.pid),
    ...parseMeta(r.meta),
  };
}

function parseMeta(raw: unknown): Pick<QueuedApproval, "risk" | "scope" | "content_sha256"> {
  if (typeof raw !== "string") return { risk: [], scope: null, content_sha256: null };
  const m = JSON.parse(raw) as Partial<QueuedApproval>;
  return { risk: m.risk ?? [], scope: m.scope ?? null, content_sha256: m.content_sha256 ?? null };
}

/** An approver that waits for `latch approvals approve|deny ID`; `onQueued` tells the person the ID. */
export function queueApprover(queue: ApprovalQueue, onQueued?: (id: string, req: ApprovalRequest) => void): Approver {
  return {
    name: "queue",
    request(req, signal) {
      const id = queue.add(req);
      onQueued?.(id, req);
      return new Promise<ApprovalAnswer>((resolve, reject) => {
        const finish = (fn: () => void) => {
          clearInterval(timer);
          clearTimeout(limit);
          signal.removeEventListener("abort", onAbort);
          queue.remove(id);
          fn();
        };
        const onAbort = () => finish(() => reject(new Error("the approval was abandoned")));
        const limit = setTimeout(
          () =>
            finish(() =>
              resolve({
                approved: false,
                by: "latch approvals",
                reason: `nobody answered \`latch approvals approve ${id}\` within ${Math.round(req.timeoutMs / 1000)} s`,
              }),
            ),
          req.timeoutMs,
        );
        const timer = setInterval(() => {
          const a = queue.answerOf(id);
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
        }, POLL_MS);
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
    },
  };
}
