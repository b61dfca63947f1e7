// Opening the state database from several processes at once: SQLite answers SQLITE_BUSY at once,
// without waiting out busy_timeout, where waiting could deadlock (two connections that both read,
// then both want to write: the journal-mode switch and the schema setup of a new latch.db). Those
// setup steps are retried here, within the same bound as every other wait on the database.
import { errnoCode } from "../errors.js";

/** How long a state-database write waits for another process before ELEDGERBUSY. */
export const LEDGER_BUSY_MS = 10_000;

export function isBusy(err: unknown): boolean {
  const code = errnoCode(err) ?? "";
  return code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED";
}

/** Run a synchronous database step, again while it is refused as busy, up to LEDGER_BUSY_MS. */
export function whileBusy<T>(step: () => T): T {
  const deadline = Date.now() + LEDGER_BUSY_MS;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (let pause = 5; ; pause = Math.min(100, pause * 2)) {
    try {
      return step();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      Atomics.wait(nap, 0, 0, pause); // a constructor cannot await; the pause is short and bounded
    }
  }
}
