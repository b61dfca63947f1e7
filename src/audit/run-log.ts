// The policy log of one host run: run_started, then per effect a decision (written before the effect
// runs; synced first when the call can change something) and an outcome (a read's may follow its
// answer, in the next turn: `soon`), then run_finished on close. An explicit --policy-log is created at startup
// (so an existing path stops startup); the default file in the state dir is created at the first call.
// Faults that pass are survived: a log that cannot be created or written now, or a state database
// that cannot keep the head now (locked by another process), refuses the calls that come while it
// lasts, and the next call tries again; a lapse in keeping the head is itself logged (anchor_gap)
// once it is kept again. Only a log whose chain cannot be continued stays refused (PolicyLog).
import { randomBytes, type KeyObject } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { LATCH_VERSION } from "../version.js";
import { sha256Json } from "./canonical-json.js";
import {
  LOG_FORMAT_VERSION,
  LogWriteError,
  PolicyLog,
  type Durability,
  type LogLine,
  type LogRecord,
  type NetworkEntry,
  type SandboxEntry,
} from "./log.js";
import type { LogHeads } from "./log-heads.js";
import { seal } from "./seal.js";
import type { PolicyProgram, Posture } from "../policy/programs.js";

export interface RunInfo {
  configSha256: string | null;
  programs: PolicyProgram[];
  posture: Posture | null;
  evidence: boolean;
  envelope: string;
  /** `--policy-evidence-seal`: the operator's X25519 public key; a result the disclosure gate changed is kept sealed to it. */
  seal?: KeyObject;
}

/**
 * A copy of the run's lines elsewhere (a fleet's PostgreSQL: src/store/pg-mirror.ts), in order. A
 * decision that must be synced also waits for its copy (`flushed`), bounded; the copy keeps what it
 * could not send yet and sends it when it can.
 */
export interface LogCopy {
  append(line: LogLine): void;
  /** Resolves once every line so far is copied; rejects with the reason after `waitMs`. */
  flushed(waitMs: number): Promise<void>;
  /** Send what waits (bounded) and stop. */
  close(): Promise<void>;
}

/** What an effect's decision line records. */
interface DecisionEntry {
  tool: string;
  session: string;
  request: unknown;
  gates: GateEntry[];
  final: string;
  reason: string;
  sandbox?: SandboxEntry;
  /** A write call's id, what `undo` and `latch history` name it by. */
  call_id?: string;
}

interface GateEntry {
  gate: string;
  action: string;
  origin: string;
}

/** A fresh default log path in the state dir: never an existing file. */
export function defaultLogPath(stateDir: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return path.join(stateDir, "logs", `policy-${stamp}-${process.pid}-${randomBytes(3).toString("hex")}.jsonl`);
}

export class RunLog {
  private log: PolicyLog | undefined;
  /** run_started is in the file. */
  private started = false;
  private effects = 0;
  /** Allowed effects whose outcome is not written yet. */
  private readonly pending = new Set<number>();
  /** Outcomes of effects that ran while the log could not take them: written first when it can. */
  private readonly unwritten: LogRecord[] = [];
  /** Outcomes left for after the call's answer (`soon`): made and written in the event loop's next turn, or before any other line. */
  private soon: (() => LogRecord)[] = [];
  private soonTimer: NodeJS.Immediate | undefined;
  /** The head could not be kept since then (and the last line that was kept). */
  private gap: { since: string; lastKept: number; reason: string } | undefined;
  private kept = 0;
  private interrupting = false;

  constructor(
    readonly file: string,
    private readonly info: RunInfo,
    eager: boolean,
    /** Where each line's hash is also kept (the state database), for `latch log verify`. */
    private readonly heads?: LogHeads,
    /** Where each line is also copied (a fleet's state store). */
    private readonly copy?: LogCopy,
  ) {
    if (eager) this.open(); // throws LogWriteError: an explicit log that cannot be created stops startup
  }

  get evidence(): boolean {
    return this.info.evidence;
  }

  /** The log, started, with what waited written: throws LogWriteError when it cannot be (now or for good). */
  private open(): PolicyLog {
    const log = this.create();
    if (log.broken) throw new LogWriteError(log.broken);
    if (!this.started) {
      const before = log.lines;
      try {
        log.append({
          type: "run_started",
          format_version: LOG_FORMAT_VERSION,
          latch_version: LATCH_VERSION,
          config_sha256: this.info.configSha256,
          programs: this.info.programs.map((p) => ({ path: p.path, sha256: p.sha256 })),
          posture: this.info.posture,
          evidence: this.info.evidence,
          envelope: this.info.envelope,
          at: new Date().toISOString(),
        });
      } finally {
        this.started = log.lines > before; // written, even if its sync's head was not kept
      }
    }
    if (this.gap) this.closeGap(log);
    for (const make of this.soon.splice(0)) this.unwritten.push(make());
    while (this.unwritten.length > 0) {
      log.append(this.unwritten[0], "write");
      this.unwritten.shift();
    }
    return log;
  }

  private create(): PolicyLog {
    if (this.log) return this.log;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      this.log = PolicyLog.create(
        this.file,
        () => this.anchor(),
        this.copy ? (line) => this.copy!.append(line) : undefined,
      );
      return this.log;
    } catch (err) {
      if (err instanceof LogWriteError && err.code === "EEXIST") throw err;
      const why =
        err instanceof LogWriteError
          ? err.message
          : `The policy log \`${this.file}\` cannot be created (${(err as Error).message}).`;
      throw new LogWriteError(`${why} Nothing ran; calls are refused until it can be.`, undefined, true);
    }
  }

  /** The head is kept again: say in the log since when it was not (this line's sync keeps it). */
  private closeGap(log: PolicyLog): void {
    const gap = this.gap!;
    this.anchorNow(log); // throws while the database still cannot keep it
    this.gap = undefined;
    log.append(
      {
        type: "anchor_gap",
        last_kept_line: gap.lastKept,
        failing_since: gap.since,
        kept_again_at: new Date().toISOString(),
        reason: gap.reason,
      },
      "sync",
    );
  }

  /** Write an effect's decision (and sync it, for "sync"); returns its effect_id. Throws LogWriteError: the effect must not run. */
  decision(d: DecisionEntry, durability: Durability): number {
    return this.writeDecision(d, durability);
  }

  /** Every sync of the log on the thread pool has answered, and none failed (PolicyLog.settled). */
  settled(): Promise<void> {
    return this.log ? this.log.settled() : Promise.resolve();
  }

  /**
   * Write an effect's decision and start its sync on the thread pool (PolicyLog.syncing): `synced`
   * resolves once it is durable, or rejects (the log is then broken) and the write must not land.
   * For tools whose every write waits for it before its rename (ToolSpec.awaitsDecisionSync). Throws
   * LogWriteError when the line cannot be written at all: the effect must not run.
   */
  decisionSyncing(d: DecisionEntry): { effectId: number; synced: Promise<void> } {
    const effectId = this.writeDecision(d, "write");
    const synced = this.log!.syncing();
    synced.catch(() => {
      // Whoever waits on it is refused with the reason; the log stays blocked (`broken`) for the next call.
    });
    return { effectId, synced };
  }

  private writeDecision(d: DecisionEntry, durability: Durability): number {
    const log = this.open();
    const effectId = this.effects + 1;
    const before = log.lines;
    const record: LogRecord = {
      type: "effect_decision",
      effect_id: effectId,
      at: new Date().toISOString(),
      tool: d.tool,
      session: d.session,
      request_sha256: sha256Json(d.request),
      gates: d.gates,
      final: d.final,
      reason: d.reason,
      ...(d.sandbox ? { sandbox: d.sandbox } : {}),
      ...(d.call_id ? { call_id: d.call_id } : {}),
      ...(this.info.evidence ? { request: d.request } : {}),
    };
    try {
      log.append(record, durability);
    } catch (err) {
      // Written, but not synced or not kept: the effect does not run, and the log says so.
      if (log.lines > before) {
        this.effects = effectId;
        if (d.final === "allow") {
          try {
            this.writeOutcome(this.outcomeRecord(effectId, "refused", { error: (err as Error).message }));
          } catch {
            // it waits in `unwritten`, written before the next line the log takes
          }
        }
      }
      throw err;
    }
    this.effects = effectId;
    if (d.final === "allow") this.pending.add(effectId);
    return effectId;
  }

  /**
   * Write an effect's outcome: a result's hash, or an error's (or refusal's) hash. The effect already
   * ran, so it waits for the next sync. `aborted`: the call's signal was. `display`: what people were
   * shown beside the result (a write's diff), kept as evidence when evidence is on.
   */
  outcome(
    effectId: number,
    status: "ok" | "refused" | "error" | "interrupted",
    body: unknown,
    aborted = false,
    display?: Record<string, unknown>,
    disclosure?: Record<string, unknown>,
    /** What latch undid after the call (src/sandbox/guard.ts): recorded whole, not only in the result's hash. */
    undone: readonly { path: string; what: string }[] = [],
    /**
     * `raw`: the result before the disclosure gate changed it (kept only sealed, and only with a seal
     * key). `network`: the domains a proxied grant reached and refused. `preimages`: a write's call id
     * and each file's hashes before and after (src/host/undo-journal.ts).
     */
    more: { raw?: unknown; network?: NetworkEntry; preimages?: Record<string, unknown>; soon?: boolean } = {},
  ): void {
    // A call cancelled by the host's shutdown was interrupted, whatever it then returned.
    if (this.interrupting && aborted) status = "interrupted";
    this.pending.delete(effectId);
    const make = () =>
      this.outcomeRecord(effectId, status, body, display, disclosure, undone, {
        sealed: more.raw !== undefined && this.info.seal ? seal(this.info.seal, more.raw) : undefined,
        network: more.network,
        preimages: more.preimages,
      });
    if (more.soon) this.writeSoon(make);
    else this.writeOutcome(make());
  }

  /**
   * A read-only call whose caller answers first (CallOptions.answerFirst): its outcome's hashes and
   * line are made after the answer has gone out, in the event loop's next turn (the answer is sent
   * from the promise chain that ends this one), or before any other line the log takes, whichever
   * is first; a log that cannot take it then keeps it like any other outcome.
   */
  private writeSoon(make: () => LogRecord): void {
    this.soon.push(make);
    this.soonTimer ??= setImmediate(() => {
      this.soonTimer = undefined;
      try {
        this.open();
      } catch {
        // it waits in `unwritten`, written before the next line the log takes
      }
    });
  }

  /** The outcome now, or, while the log cannot take it, as soon as it can (before any later line). */
  private writeOutcome(record: LogRecord): void {
    this.unwritten.push(record);
    this.open(); // writes it (and any before it); throws when it cannot, and it waits
  }

  private outcomeRecord(
    effectId: number,
    status: string,
    body: unknown,
    display?: Record<string, unknown>,
    disclosure?: Record<string, unknown>,
    undone: readonly { path: string; what: string }[] = [],
    {
      sealed,
      network,
      preimages,
    }: { sealed?: unknown; network?: NetworkEntry; preimages?: Record<string, unknown> } = {},
  ): LogRecord {
    const hash = sha256Json(body);
    const record: LogRecord = {
      type: "effect_outcome",
      effect_id: effectId,
      status,
      ...(status === "ok" ? { result_sha256: hash } : { error_sha256: hash }),
      // What the disclosure gate did (issue 29): rule ids, counts, keyed fingerprints; `body` is
      // what was shown, so the hash and the evidence are of the redacted result.
      ...(disclosure ? { disclosure } : {}),
      ...(undone.length > 0 ? { undone } : {}),
      ...(network ? { network } : {}),
      ...(preimages ? { preimages } : {}),
      ...(this.info.evidence ? { result: body } : {}),
      ...(this.info.evidence && display ? { display } : {}),
      ...(sealed ? { sealed_raw: sealed } : {}),
    };
    return record;
  }

  /**
   * The log's head into the state database (`latch log verify` compares), after each sync of the log:
   * with a decision that must be synced, within SYNC_DELAY_MS of a read's, and with run_finished, so a
   * finished log's head is its last line. A second durable write per line would double the cost of a
   * read. A head behind the file only happens to a run that did not finish, which fails verify anyway.
   * A failure refuses calls while it lasts: the next call tries again, and the lapse is logged.
   */
  private anchor(): void {
    if (!this.log || this.gap) return; // a gap is closed by the next call (open), with its record
    try {
      this.anchorNow(this.log);
    } catch (err) {
      this.gap = { since: new Date().toISOString(), lastKept: this.kept, reason: (err as Error).message };
      throw err;
    }
  }

  private anchorNow(log: PolicyLog): void {
    if (!this.heads) return;
    try {
      this.heads.record(this.file, log.head, log.lines);
      this.kept = log.lines;
    } catch (err) {
      throw new LogWriteError(
        `The policy log's head cannot be kept in the state database (${(err as Error).message}); nothing ran. Calls are refused while this lasts and served again once it can be kept.`,
        undefined,
        true,
      );
    }
  }

  /** Why the log cannot be written now, if it cannot (then every effect is blocked). */
  get broken(): string | undefined {
    return (
      this.log?.broken ??
      (this.gap ? `The policy log's head cannot be kept in the state database (${this.gap.reason}).` : undefined)
    );
  }

  /** The config was loaded again (it changed on disk): the decisions after this line follow it. */
  configReloaded(info: Pick<RunInfo, "configSha256" | "programs" | "envelope">): void {
    this.open().append(
      {
        type: "config_reloaded",
        config_sha256: info.configSha256,
        programs: info.programs.map((p) => ({ path: p.path, sha256: p.sha256 })),
        envelope: info.envelope,
        at: new Date().toISOString(),
      },
      "sync",
    );
  }

  /**
   * Wait (at most `waitMs`) until every line so far is in the state store's copy; rejects with the
   * reason (PostgreSQL unreachable) when it is not: a call whose decision is not there must not run.
   */
  copied(waitMs: number): Promise<void> {
    return this.copy ? this.copy.flushed(waitMs) : Promise.resolve();
  }

  /** A person approved a server's tools (`latch servers approve`): synced before the new pins are offered. */
  serversApproved(server: string, tools: { name: string; sha256: string }[], removed: string[]): void {
    this.open().append({ type: "servers_approved", server, tools, removed, at: new Date().toISOString() }, "sync");
  }

  /** The host is shutting down: cancelled calls are logged as interrupted. */
  interrupt(): void {
    this.interrupting = true;
  }

  /** Ends the log; an allowed effect still running (its call did not end in time) is logged as interrupted. */
  finish(): void {
    if (this.soonTimer) clearImmediate(this.soonTimer); // what waits is written below
    this.soonTimer = undefined;
    if (!this.log) return;
    for (const id of [...this.pending]) {
      try {
        this.outcome(id, "interrupted", {
          code: "EINTERRUPTED",
          message: "latch shut down before the call ended; its process was killed.",
        });
      } catch {
        break; // the log cannot be written: finish() below says so in the same way
      }
    }
    try {
      this.open(); // what still waits, and a gap that can now be closed
    } catch {
      // run_finished below is then missing or not kept: verify says so
    }
    // Its run_finished is synced, and so kept; a log whose start or outcomes never made it gets none.
    this.log.finish(this.effects, this.started && this.unwritten.length === 0);
  }
}
