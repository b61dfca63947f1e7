// The state store on PostgreSQL, shared by a fleet of latch instances: one approval queue (every
// instance's requests, labelled by host, workspace and session) and a copy of every run's policy log
// with signed checkpoints (src/store/pg-mirror.ts). LISTEN/NOTIFY carries only a request's id as a
// wake-up: the row is always read again, and every (re)connect of the listener wakes every watcher
// to read again, so a notification lost while PostgreSQL was away loses nothing. An answer is one
// conditional UPDATE on (id, pending, shown sha256, not expired): exactly one of two answers wins.
// Failure is a refusal: while PostgreSQL cannot be reached, `down` says why, and whatever needs it
// (an approval, a synced decision) is refused with that reason within its own wait.
import { randomBytes } from "node:crypto";
import os from "node:os";
import type { Client, Pool, PoolClient } from "pg";
import { ToolError } from "../errors.js";
import { PgMirror } from "./pg-mirror.js";
import { migratePg } from "./pg-schema.js";
import {
  queuedFromRow,
  type AnswerRow,
  type ApprovalStore,
  type NewApproval,
  type QueuedApproval,
  type StateStore,
} from "./types.js";

/** How long connecting and one statement may take: nothing waits on PostgreSQL longer than this. */
const PG_CONNECT_MS = 3000;
const PG_QUERY_MS = 5000;
/** The listener's reconnect backoff, first and most. */
const RETRY_MS = [100, 2000] as const;

type Pg = (typeof import("pg"))["default"];

/** A postgres:// URL for people: the password replaced. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparsable postgres URL)";
  }
}

export class PgStore implements StateStore {
  readonly kind = "postgres";
  readonly where: string;
  readonly approvals: ApprovalStore;
  private listener: Client | undefined;
  private listenerDown: string | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly watchers = new Set<(id?: string) => void>();
  private readonly mirrors = new Set<PgMirror>();

  private constructor(
    private readonly pg: Pg,
    readonly pool: Pool,
    private readonly url: string,
    /** The state dir: the checkpoint key and the exported checkpoints live there. */
    private readonly stateDir: string,
  ) {
    this.where = shownUrl(url);
    this.approvals = this.makeApprovals();
  }

  /**
   * Connect, migrate and listen; throws ESTATE naming the URL and the fix when PostgreSQL cannot be
   * reached. `readOnly` (verify): connect only, no migration, no listener, nothing written.
   */
  static async open(url: string, stateDir: string, opts: { readOnly?: boolean } = {}): Promise<PgStore> {
    const pg = (await import("pg")).default;
    const pool = new pg.Pool({
      connectionString: url,
      connectionTimeoutMillis: PG_CONNECT_MS,
      query_timeout: PG_QUERY_MS,
      max: 4,
      application_name: "latch",
    });
    // An idle client's error (the server went away) is also seen by the next query: kept quiet here.
    pool.on("error", () => undefined);
    const store = new PgStore(pg, pool, url, stateDir);
    let client: PoolClient | undefined;
    try {
      client = await pool.connect();
      if (!opts.readOnly) {
        await migratePg(client, store.where);
        await store.listen();
      }
    } catch (err) {
      client?.release();
      client = undefined;
      await pool.end().catch(() => undefined);
      if (err instanceof ToolError) throw err;
      throw new ToolError(
        "ESTATE",
        `The state store ${store.where} cannot be reached (${(err as Error).message}). Start PostgreSQL or fix the URL (--state, LATCH_STATE_URL).`,
      );
    } finally {
      client?.release();
    }
    return store;
  }

  get down(): string | undefined {
    if (this.closed) return `the state store ${this.where} is closed`;
    return this.listenerDown;
  }

  /** The listener: one connection that LISTENs; on its loss, reconnect with backoff and wake everyone. */
  private async listen(): Promise<void> {
    const c = new this.pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: PG_CONNECT_MS,
      application_name: "latch listener",
    });
    const lost = (why: string) => {
      if (this.listener !== c) return;
      this.listener = undefined;
      this.listenerDown = `PostgreSQL at ${this.where} is unreachable since ${new Date().toISOString()} (${why})`;
      c.end().catch(() => undefined);
      this.reconnect(0);
    };
    c.on("error", (err) => lost(err.message));
    c.on("end", () => lost("the connection ended"));
    c.on("notification", (n) => {
      for (const w of [...this.watchers]) w(n.payload);
    });
    await c.connect();
    await c.query("LISTEN latch_approvals");
    this.listener = c;
    this.listenerDown = undefined;
    for (const w of [...this.watchers]) w(); // (re)connected: every watcher reads again
    for (const m of this.mirrors) m.wake();
  }

  private reconnect(attempt: number): void {
    if (this.closed || this.retry) return;
    const ms = Math.min(RETRY_MS[0] * 2 ** attempt, RETRY_MS[1]);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen().catch((err: Error) => {
        this.listenerDown = `PostgreSQL at ${this.where} is unreachable since ${new Date().toISOString()} (${err.message})`;
        this.reconnect(attempt + 1);
      });
    }, ms);
    this.retry.unref();
  }

  /** A statement on the pool; a connection fault is named with the store. */
  async query<R extends Record<string, unknown>>(sql: string, values: unknown[] = []): Promise<R[]> {
    if (this.closed) throw new Error(`the state store ${this.where} is closed`);
    try {
      return (await this.pool.query<R>(sql, values)).rows;
    } catch (err) {
      throw new Error(`PostgreSQL at ${this.where}: ${(err as Error).message}`, { cause: err });
    }
  }

  private makeApprovals(): ApprovalStore {
    const q = <R extends Record<string, unknown>>(sql: string, values: unknown[] = []) => this.query<R>(sql, values);
    return {
      add: async (a: NewApproval) => {
        const now = Date.now();
        for (;;) {
          const id = randomBytes(4).toString("hex");
          const rows = await q(
            `INSERT INTO approvals (id, host, workspace, session, tool, reason, args, diff, diff_note, meta, shown_sha256, state, created_at, expires_at, pid)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $13, $14) ON CONFLICT (id) DO NOTHING RETURNING id`,
            [
              id,
              a.host,
              a.workspace,
              a.session,
              a.tool,
              a.reason,
              JSON.stringify(a.args),
              a.diff ?? null,
              a.diffNote ?? null,
              JSON.stringify({ risk: a.risk ?? [], scope: a.scope ?? null, content_sha256: a.contentSha256 ?? null }),
              a.shownSha256,
              now,
              now + a.timeoutMs,
              process.pid,
            ],
          );
          if (rows.length === 1) return id; // else the id was taken: draw another
        }
      },
      list: async () => {
        await q("DELETE FROM approvals WHERE expires_at < $1", [Date.now()]);
        return (await q("SELECT * FROM approvals ORDER BY created_at, id")).map(toQueued);
      },
      get: async (id) => {
        const [row] = await q("SELECT * FROM approvals WHERE id = $1 AND expires_at >= $2", [id, Date.now()]);
        return row ? toQueued(row) : undefined;
      },
      answer: async (id, a) => {
        const state = !a.approved ? "denied" : a.scope === "session" ? "approved_session" : "approved";
        const rows = await q(
          `UPDATE approvals SET state = $1, answered_by = $2, note = $3
           WHERE id = $4 AND state = 'pending' AND expires_at >= $5
             AND ($6::text IS NULL OR shown_sha256 = $6)
             AND ($7 = false OR (meta::json ->> 'scope') IS NOT NULL)
           RETURNING id`,
          [
            state,
            a.by ?? null,
            a.note ?? null,
            id,
            Date.now(),
            a.shownSha256 ?? null,
            a.approved && a.scope === "session",
          ],
        );
        return rows.length === 1;
      },
      answerOf: async (id) => {
        const [row] = await q<{ state: AnswerRow["state"]; answered_by: string | null; note: string | null }>(
          "SELECT state, answered_by, note FROM approvals WHERE id = $1",
          [id],
        );
        if (!row) return undefined;
        return {
          state: row.state,
          ...(row.answered_by ? { by: row.answered_by } : {}),
          ...(row.note ? { note: row.note } : {}),
        };
      },
      remove: async (id) => void (await q("DELETE FROM approvals WHERE id = $1", [id])),
      watch: (onChange) => {
        this.watchers.add(onChange);
        return () => this.watchers.delete(onChange);
      },
    };
  }

  mirrorRun(run: { file: string; workspace: string }): PgMirror {
    const m = new PgMirror(this, { ...run, host: os.hostname() }, this.stateDir, () => this.mirrors.delete(m));
    this.mirrors.add(m);
    return m;
  }

  async close(): Promise<void> {
    await Promise.all([...this.mirrors].map((m) => m.close()));
    this.closed = true;
    clearTimeout(this.retry);
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

function toQueued(r: Record<string, unknown>): QueuedApproval {
  const m = JSON.parse(String(r.meta)) as Partial<QueuedApproval>;
  return queuedFromRow(r, m, {
    host: String(r.host),
    workspace: String(r.workspace),
    shown_sha256: String(r.shown_sha256),
  });
}
