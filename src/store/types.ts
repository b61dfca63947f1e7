// The state store: what latch keeps beside a workspace that other processes read and answer (the
// approval queue), and where a copy of the policy log's records and heads goes. One interface, two
// implementations: SQLite in the state dir (one machine: src/store/sqlite.ts) and PostgreSQL (a fleet
// of latch instances sharing one queue and one audit store: src/store/pg.ts). The read-before-write
// ledger is not here: it stays local to its workspace (two CI runners have different checkouts).
import type { LogLine } from "../audit/log.js";

type ApprovalState = "pending" | "approved" | "approved_session" | "denied";

export interface QueuedApproval {
  id: string;
  tool: string;
  session: string;
  reason: string;
  args: unknown;
  diff: string | null;
  diff_note: string | null;
  state: ApprovalState;
  /** What is at stake, and what "for this session" would cover (none: only once). */
  risk: string[];
  scope: string | null;
  /** The sha256 of each file's content the diff was made from (null: a new file): the write lands only on it. */
  content_sha256: Record<string, string | null> | null;
  created_at: string;
  expires_at: string;
  pid: number;
  /** Which machine, workspace folder asked (null in a queue written before they were kept). */
  host: string | null;
  workspace: string | null;
  /** The sha256 of the text a person is shown (the diff, else the visible arguments): an answer names it. */
  shown_sha256: string | null;
}

export interface NewApproval {
  tool: string;
  session: string;
  reason: string;
  args: unknown;
  diff?: string;
  diffNote?: string;
  timeoutMs: number;
  risk?: string[];
  scope?: string | null;
  contentSha256?: Record<string, string | null>;
  host: string;
  workspace: string;
  shownSha256: string;
}

export interface AnswerInput {
  approved: boolean;
  scope: "once" | "session";
  /** Where the person answered, and a deny's note. */
  by?: string;
  note?: string;
  /** The sha256 of what the person was shown: the answer lands only on a request that still shows it. */
  shownSha256?: string;
}

export interface AnswerRow {
  state: ApprovalState;
  by?: string;
  note?: string;
}

export interface ApprovalStore {
  add(a: NewApproval): Promise<string>;
  /** Waiting and answered requests still in the queue; expired ones are dropped first. */
  list(): Promise<QueuedApproval[]>;
  get(id: string): Promise<QueuedApproval | undefined>;
  /**
   * One conditional update on (id, pending, shown sha256, not expired): of two answers at once exactly
   * one wins (true); a stale one (answered, expired, or showing other bytes) is refused (false).
   */
  answer(id: string, a: AnswerInput): Promise<boolean>;
  answerOf(id: string): Promise<AnswerRow | undefined>;
  remove(id: string): Promise<void>;
  /**
   * Wake-ups: `id` for a request that changed, undefined when anything may have (a reconnect: read
   * again). Returns the unsubscribe.
   */
  watch(onChange: (id?: string) => void): () => void;
}

/** One run's copy of its policy log in the store. */
export interface RunMirror {
  /** Queue a line the log just wrote (in order). */
  append(line: LogLine): void;
  /** Resolves once every line queued so far is committed; rejects with the reason after `waitMs`. */
  flushed(waitMs: number): Promise<void>;
  /** Flush what is queued (bounded), sign a last checkpoint, stop. */
  close(): Promise<void>;
}

export interface StateStore {
  readonly kind: "sqlite" | "postgres";
  /** Where, for people (a URL without its password). */
  readonly where: string;
  readonly approvals: ApprovalStore;
  /** Why the store cannot be reached now, if it cannot (PostgreSQL down): calls that need it are refused. */
  readonly down: string | undefined;
  /** A copy of a run's policy log (PostgreSQL); absent for SQLite, where the log file and its head are the record. */
  mirrorRun?(run: { file: string; workspace: string }): RunMirror;
  close(): Promise<void>;
}

/**
 * A queue row as the interface gives it, from either store's columns: `meta` holds what SQLite keeps
 * in its JSON column (risk, scope, hashes, and there also host, workspace, shown_sha256), `labels`
 * what a store keeps in columns of their own (PostgreSQL).
 */
export function queuedFromRow(
  r: Record<string, unknown>,
  meta: Partial<QueuedApproval>,
  labels: Pick<QueuedApproval, "host" | "workspace" | "shown_sha256">,
): QueuedApproval {
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
    risk: meta.risk ?? [],
    scope: meta.scope ?? null,
    content_sha256: meta.content_sha256 ?? null,
    ...labels,
  };
}
