// The policy log of one host run: run_started, then per effect a decision (written before the effect
// runs; synced first when the call can change something) and an outcome, then run_finished on close. An explicit --policy-log is created at startup
// (so an existing path stops startup); the default file in the state dir is created at the first call.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { LATCH_VERSION } from "../version.js";
import { sha256Json } from "./canonical-json.js";
import { LOG_FORMAT_VERSION, LogWriteError, PolicyLog, type Durability } from "./log.js";
import type { LogHeads } from "./log-heads.js";
import type { PolicyProgram, Posture } from "../policy/programs.js";

export interface RunInfo {
  configSha256: string | null;
  programs: PolicyProgram[];
  posture: Posture | null;
  evidence: boolean;
  envelope: string;
}

export interface GateEntry {
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
  private failure: string | undefined;
  private effects = 0;
  /** Allowed effects whose outcome is not written yet. */
  private readonly pending = new Set<number>();
  private interrupting = false;

  constructor(
    readonly file: string,
    private readonly info: RunInfo,
    eager: boolean,
    /** Where each line's hash is also kept (the state database), for `latch log verify`. */
    private readonly heads?: LogHeads,
  ) {
    if (eager) this.open(); // throws LogWriteError: an explicit log that cannot be created stops startup
  }

  get evidence(): boolean {
    return this.info.evidence;
  }

  private open(): PolicyLog {
    // A head that could not be kept (anchor) blocks too, though the file itself still takes lines.
    if (this.failure) throw new LogWriteError(this.failure);
    if (this.log) return this.log;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const log = PolicyLog.create(this.file, () => this.anchor(log));
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
      this.log = log;
      return log;
    } catch (err) {
      this.failure =
        err instanceof LogWriteError
          ? err.message
          : `The policy log \`${this.file}\` cannot be created (${(err as Error).message}).`;
      throw new LogWriteError(this.failure);
    }
  }

  /** Write an effect's decision (and sync it, for "sync"); returns its effect_id. Throws LogWriteError: the effect must not run. */
  decision(
    d: {
      tool: string;
      session: string;
      request: unknown;
      gates: GateEntry[];
      final: string;
      reason: string;
      sandbox?: { contained: boolean; mode?: string; network: boolean };
    },
    durability: Durability,
  ): number {
    const log = this.open();
    const effectId = this.effects + 1;
    log.append(
      {
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
        ...(this.info.evidence ? { request: d.request } : {}),
      },
      durability,
    );
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
  ): void {
    const log = this.open();
    // A call cancelled by the host's shutdown was interrupted, whatever it then returned.
    if (this.interrupting && aborted) status = "interrupted";
    this.pending.delete(effectId);
    const hash = sha256Json(body);
    log.append(
      {
        type: "effect_outcome",
        effect_id: effectId,
        status,
        ...(status === "ok" ? { result_sha256: hash } : { error_sha256: hash }),
        // What the disclosure gate did (issue 29): rule ids, counts, keyed fingerprints; `body` is
        // what was shown, so the hash and the evidence are of the redacted result.
        ...(disclosure ? { disclosure } : {}),
        ...(undone.length > 0 ? { undone } : {}),
        ...(this.info.evidence ? { result: body } : {}),
        ...(this.info.evidence && display ? { display } : {}),
      },
      "write",
    );
  }

  /**
   * The log's head into the state database (`latch log verify` compares), after each sync of the log:
   * with a decision that must be synced, within SYNC_DELAY_MS of a read's, and with run_finished, so a
   * finished log's head is its last line. A second durable write per line would double the cost of a
   * read. A head behind the file only happens to a run that did not finish, which fails verify anyway.
   * A failure blocks like the log's own.
   */
  private anchor(log: PolicyLog): void {
    if (!this.heads) return;
    try {
      this.heads.record(this.file, log.head, log.lines);
    } catch (err) {
      this.failure = `The policy log's head cannot be kept in the state database (${(err as Error).message}); no effect runs until latch is restarted.`;
      throw new LogWriteError(this.failure);
    }
  }

  /** Why the log cannot be written, if it cannot (then every effect is blocked). */
  get broken(): string | undefined {
    return this.failure ?? this.log?.broken;
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

  /** The host is shutting down: cancelled calls are logged as interrupted. */
  interrupt(): void {
    this.interrupting = true;
  }

  /** Ends the log; an allowed effect still running (its call did not end in time) is logged as interrupted. */
  finish(): void {
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
    this.log.finish(this.effects); // its run_finished is synced, and so anchored
  }
}
