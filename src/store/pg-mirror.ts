// One run's copy of its policy log in PostgreSQL: every line the log writes is queued here in order
// and committed in batches (the lines and the run's head in one transaction). A decision that must be
// synced waits for its line's commit (flushed), bounded: PostgreSQL away means the call is refused
// with the reason, while the lines wait here and are committed when it is back (none is dropped). A
// checkpoint of the committed head, signed with the state dir's key, follows each CHECKPOINT_MS of
// commits and the run's end.
import { randomUUID } from "node:crypto";
import type { LogLine } from "../audit/log.js";
import { canonicalJson } from "../audit/canonical-json.js";
import { exportCheckpoint, stateDirSigner, type Signer } from "./checkpoint.js";
import type { PgStore } from "./pg.js";
import type { RunMirror } from "./types.js";

const BATCH = 500;
const CHECKPOINT_MS = 5000;
const RETRY_MS = 250;

export class PgMirror implements RunMirror {
  readonly runId = randomUUID();
  private readonly queue: LogLine[] = [];
  private committed = 0;
  private checkpointed = 0;
  private lastCheckpoint = 0;
  private head = "";
  private failing: string | undefined;
  private flushing: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<{ seq: number; done: () => void }>();
  private signer: Signer | undefined;
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly store: PgStore,
    private readonly run: { file: string; workspace: string; host: string },
    private readonly stateDir: string,
    private readonly onClose: () => void,
  ) {}

  append(line: LogLine): void {
    // Never throws: the line is in the log file already. While PostgreSQL is away only reads run
    // (an effect waits for its copy, flushed), so what waits here is their lines, in memory.
    this.queue.push(line);
    this.wake();
  }

  /** Commit what is queued now (the store calls it when its listener reconnects). */
  wake(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
      // A line appended while the flush awaited its last step (the checkpoint's INSERT) found it still
      // running and did not start another: commit it now, unless a retry waits for PostgreSQL.
      if (this.queue.length > 0 && this.retry === undefined) this.wake();
    });
  }

  flushed(waitMs: number): Promise<void> {
    const seq = this.queue.at(-1)?.sequence ?? 0;
    if (seq <= this.committed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = {
        seq,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(w);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(
          new Error(
            `the decision could not be copied to the state store within ${waitMs} ms (${this.failing ?? this.store.down ?? "PostgreSQL is slow"})`,
          ),
        );
      }, waitMs);
      this.waiters.add(w);
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, BATCH);
      try {
        await this.commit(batch);
      } catch (err) {
        this.failing = (err as Error).message;
        this.retry ??= setTimeout(() => this.wake(), RETRY_MS);
        this.retry.unref();
        return;
      }
      this.failing = undefined;
      this.queue.splice(0, batch.length);
      this.committed = batch.at(-1)!.sequence;
      this.head = batch.at(-1)!.record_sha256;
      for (const w of [...this.waiters]) if (w.seq <= this.committed) w.done();
    }
    if (Date.now() - this.lastCheckpoint >= CHECKPOINT_MS) await this.checkpoint().catch(() => undefined);
  }

  private async commit(lines: LogLine[]): Promise<void> {
    const client = await this.store.pool.connect();
    try {
      await client.query("BEGIN");
      const last = lines.at(-1)!;
      const now = new Date().toISOString();
      await client.query(
        `INSERT INTO runs (run_id, host, workspace, file, pid, started_at, head, lines, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (run_id) DO UPDATE SET head = excluded.head, lines = excluded.lines, updated_at = excluded.updated_at`,
        [
          this.runId,
          this.run.host,
          this.run.workspace,
          this.run.file,
          process.pid,
          this.startedAt,
          last.record_sha256,
          last.sequence,
          now,
        ],
      );
      const values: unknown[] = [];
      const rows = lines.map((l, i) => {
        values.push(this.runId, l.sequence, l.previous_sha256, canonicalJson(l.record), l.record_sha256);
        const b = i * 5;
        return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
      });
      // A batch committed just before its connection broke is sent again: the same lines, kept once.
      await client.query(
        `INSERT INTO log_records (run_id, sequence, previous_sha256, record, record_sha256) VALUES ${rows.join(", ")} ON CONFLICT (run_id, sequence) DO NOTHING`,
        values,
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw new Error(`PostgreSQL at ${this.store.where}: ${(err as Error).message}`, { cause: err });
    } finally {
      client.release();
    }
  }

  /** Sign the committed head (when it moved) into the store and the export file. */
  private async checkpoint(): Promise<void> {
    if (this.committed === this.checkpointed) return;
    this.signer ??= stateDirSigner(this.stateDir);
    const cp = this.signer.sign({
      type: "latch_checkpoint",
      run_id: this.runId,
      host: this.run.host,
      file: this.run.file,
      lines: this.committed,
      head: this.head,
      at: new Date().toISOString(),
    });
    this.lastCheckpoint = Date.now();
    exportCheckpoint(this.stateDir, cp);
    const { public_key, signature, ...body } = cp;
    await this.store.query(
      "INSERT INTO checkpoints (run_id, lines, head, body, public_key, signature) VALUES ($1, $2, $3, $4, $5, $6)",
      [cp.run_id, cp.lines, cp.head, canonicalJson(body), public_key, signature],
    );
    this.checkpointed = cp.lines;
  }

  async close(): Promise<void> {
    try {
      await this.flushed(5000);
      await this.flushing;
      this.lastCheckpoint = 0;
      await this.checkpoint();
    } catch {
      // PostgreSQL is away: the lines not committed are in the local log file, which verify reads
    } finally {
      clearTimeout(this.retry);
      this.onClose();
    }
  }
}
