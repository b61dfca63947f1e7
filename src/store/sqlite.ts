// The state store on one machine: pending approvals in the state DB (latch.db, table `approvals`). A
// waiting call adds a row; `latch approvals approve ID` or the console, from another process, answers
// it. Rows are removed when answered or abandoned, so the queue shows only calls that are waiting now.
// The policy log's heads stay in the same database (src/audit/log-heads.ts), written by the run log.
import type Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { openStateDb } from "../fs/db.js";
import {
  queuedFromRow,
  type AnswerInput,
  type AnswerRow,
  type ApprovalStore,
  type NewApproval,
  type QueuedApproval,
  type StateStore,
} from "./types.js";

/** How often watchers look for another process's commit (one pragma). */
const WATCH_MS = 25;

export class ApprovalQueue {
  private readonly db: Database.Database;

  constructor(dbFile: string) {
    this.db = openStateDb(dbFile);
  }

  add(req: NewApproval): string {
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
        // Kept in meta (no migration): the fleet's labels and the sha256 an answer must name.
        JSON.stringify({
          risk: req.risk ?? [],
          scope: req.scope ?? null,
          content_sha256: req.contentSha256 ?? null,
          host: req.host,
          workspace: req.workspace,
          shown_sha256: req.shownSha256,
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
   * grant, or it shows other bytes than `shownSha256`). One UPDATE guarded by `state = 'pending'`: of
   * two answers at once (two terminals, two console tabs), exactly one wins.
   */
  answer(id: string, a: AnswerInput): boolean {
    const state = !a.approved ? "denied" : a.scope === "session" ? "approved_session" : "approved";
    const sessionOk = a.approved && a.scope === "session" ? " AND json_extract(meta, '$.scope') IS NOT NULL" : "";
    const shown = a.shownSha256 === undefined ? "" : " AND json_extract(meta, '$.shown_sha256') = ?";
    const r = this.db
      .prepare(
        `UPDATE approvals SET state = ?, meta = json_set(coalesce(meta, '{}'), '$.answered_by', ?, '$.note', ?) WHERE id = ? AND state = 'pending' AND expires_at >= ?${sessionOk}${shown}`,
      )
      .run(
        state,
        a.by ?? null,
        a.note ?? null,
        id,
        Date.now(),
        ...(a.shownSha256 === undefined ? [] : [a.shownSha256]),
      );
    return r.changes === 1;
  }

  /** The request's state, and for an answered one where the person answered and their note. */
  answerOf(id: string): AnswerRow | undefined {
    const row = this.db
      .prepare(
        "SELECT state, json_extract(meta, '$.answered_by') AS by, json_extract(meta, '$.note') AS note FROM approvals WHERE id = ?",
      )
      .get(id) as { state: AnswerRow["state"]; by: string | null; note: string | null } | undefined;
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
  const m = (typeof r.meta === "string" ? JSON.parse(r.meta) : {}) as Partial<QueuedApproval>;
  return queuedFromRow(r, m, {
    host: m.host ?? null,
    workspace: m.workspace ?? null,
    shown_sha256: m.shown_sha256 ?? null,
  });
}

/** The queue as an ApprovalStore: the same calls, and watchers woken by another process's commit. */
function sqliteApprovals(queue: ApprovalQueue): ApprovalStore & { close(): void } {
  const watchers = new Set<(id?: string) => void>();
  let timer: NodeJS.Timeout | undefined;
  let last = -1;
  const tick = () => {
    const v = queue.version();
    if (v === last) return;
    last = v;
    for (const w of [...watchers]) w();
  };
  return {
    add: async (a) => queue.add(a),
    list: async () => queue.list(),
    get: async (id) => queue.get(id),
    answer: async (id, a) => queue.answer(id, a),
    answerOf: async (id) => queue.answerOf(id),
    remove: async (id) => queue.remove(id),
    watch(onChange) {
      watchers.add(onChange);
      timer ??= setInterval(tick, WATCH_MS).unref();
      return () => {
        watchers.delete(onChange);
        if (watchers.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    close() {
      clearInterval(timer);
      queue.close();
    },
  };
}

/** The store of one state dir's latch.db. */
export function sqliteStore(dbFile: string): StateStore {
  const approvals = sqliteApprovals(new ApprovalQueue(dbFile));
  return {
    kind: "sqlite",
    where: dbFile,
    approvals,
    down: undefined,
    close: async () => approvals.close(),
  };
}
