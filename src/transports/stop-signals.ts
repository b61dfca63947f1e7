// SIGINT and SIGTERM while latch serves. The first starts the clean stop (running calls cancelled,
// outcomes logged, run_finished written); every later one is ignored while that stop runs, so a
// wrapper that signals twice (Codex sends SIGTERM at exit) or a double Ctrl-C cannot cut the policy
// log short. A third Ctrl-C within 2 s of the first is a person insisting: the log is closed at once,
// line by line (host.close() is synchronous: interrupted outcomes, then run_finished), what the run
// still holds is removed (run.end(): processes killed, temp files and locks removed), and latch exits.
import { log } from "./log.js";

const FORCE_WINDOW_MS = 2000;
const FORCE_AFTER = 3;

export function onStopSignals(
  stop: (sig: NodeJS.Signals) => void,
  host: { close(): void },
  run: { end(): void },
): void {
  let first = 0;
  let interrupts = 0;
  const handle = (sig: NodeJS.Signals) => {
    const now = Date.now();
    if (first === 0) {
      first = now;
      if (sig === "SIGINT") interrupts = 1;
      stop(sig);
      return;
    }
    if (sig !== "SIGINT" || now - first > FORCE_WINDOW_MS) return;
    if (++interrupts < FORCE_AFTER) return;
    host.close(); // synchronous: interrupted outcomes, then run_finished
    run.end();
    log("error", `${sig} received ${FORCE_AFTER} times; latch stopped at once (the policy log is closed).`);
    process.exit(130);
  };
  process.on("SIGINT", handle);
  process.on("SIGTERM", handle);
}
