// How a run is stopped, apart from how it is started and read: why it was stopped (deadline, the
// caller's abort, an output limit), SIGTERM then SIGKILL after a grace, SIGKILL again for processes
// that appear after it, and the wait for the group to be gone. runBounded (exec.ts) and ripgrep
// (src/browse/grep-rg.ts) stop their processes through it; each says only how to signal and how to
// tell whether anything is left.
export type StopReason = "timeout" | "cancel" | "limit" | "exit";

/**
 * An abort whose reason is one of these stops the run with SIGKILL at once, with no grace: a process
 * that must not run on a moment longer (its sandbox lost a mount, src/sandbox/holds.ts; review g21: a
 * process that ignored SIGTERM wrote on through the 2 s grace).
 */
export class KillAtOnce extends Error {}

export interface TerminationSpec {
  /**
   * Sends a signal to everything of the run. SIGTERM sent again must reach only what has not had it
   * (a program may take a second SIGTERM as "stop now"); SIGKILL reaches everything each time.
   */
  kill(sig: NodeJS.Signals): void;
  /** Whether anything of the run still runs (zombies do not count); default: never (one process). */
  alive?(): boolean;
  /** How long SIGTERM is given before SIGKILL; 0: SIGKILL at once. */
  graceMs: number;
  /** The caller's abort: stops the run as "cancel". */
  signal?: AbortSignal;
  /** Absolute time (Date.now() scale) after which the run is stopped as "timeout". */
  deadline?: number;
  /** Called once SIGKILL has had this long to work: for closing pipes an escaped process holds. */
  afterKill?: { ms: number; run(): void };
}

export class Termination {
  timedOut = false;
  cancelled = false;
  overLimit = false;
  private stopping = false;
  private stoppedAt = 0;
  private killed = false;
  private exited = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onAbort = () => this.stop("cancel", this.spec.signal?.reason instanceof KillAtOnce);

  constructor(private readonly spec: TerminationSpec) {
    spec.signal?.addEventListener("abort", this.onAbort, { once: true });
    if (spec.signal?.aborted) this.stop("cancel", spec.signal.reason instanceof KillAtOnce);
    if (spec.deadline !== undefined)
      this.timers.push(setTimeout(() => this.stop("timeout"), Math.max(0, spec.deadline - Date.now())));
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /**
   * Stops the run for `why` (the first reason of each kind is kept); later calls only record theirs.
   * `now`: SIGKILL at once, even when a SIGTERM's grace is running.
   */
  stop(why: StopReason, now = false): void {
    if (why === "timeout") {
      // A run that already ended, with nothing left, has not timed out.
      if (this.exitedClean()) return;
      this.timedOut = true;
    } else if (why === "cancel") this.cancelled = true;
    else if (why === "limit") this.overLimit = true;
    const kill = () => {
      if (this.killed) return;
      this.killed = true;
      this.spec.kill("SIGKILL");
      const after = this.spec.afterKill;
      if (after) this.timers.push(setTimeout(() => after.run(), after.ms));
    };
    if (this.stopping) return now ? kill() : undefined;
    this.stopping = true;
    this.stoppedAt = Date.now();
    if (this.spec.graceMs === 0 || now) return kill();
    this.spec.kill("SIGTERM");
    this.timers.push(setTimeout(kill, this.spec.graceMs));
    // Through the grace, SIGTERM reaches what formed after it went out too (a box whose program was
    // still starting ran on to SIGKILL), looked for 20 ms on and then at doubling intervals up to a
    // quarter second (a box starts slower on a loaded machine): each look reads the process table.
    if (!this.spec.alive) return;
    const again = (ms: number) => {
      if (Date.now() + ms >= this.stoppedAt + this.spec.graceMs) return;
      this.timers.push(
        setTimeout(() => {
          if (this.killed) return;
          this.spec.kill("SIGTERM");
          again(Math.min(ms * 2, 250));
        }, ms),
      );
    };
    again(20);
  }

  /** The child itself exited: whatever it left running in its group does not outlive the run. */
  childExited(): void {
    this.exited = true;
    if (this.spec.alive?.()) this.stop("exit");
  }

  private exitedClean(): boolean {
    return this.exited && !this.spec.alive?.();
  }

  /**
   * Waits until nothing of the run is left, or SIGKILL and `extraMs` have had their time; a process
   * forked while SIGKILL went out, or one that entered the run late, gets it too. Then disarms.
   */
  async settle(extraMs: number): Promise<void> {
    while (this.spec.alive?.()) {
      this.stop("exit");
      if (this.killed) this.spec.kill("SIGKILL");
      if (Date.now() > this.stoppedAt + this.spec.graceMs + extraMs) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    this.dispose();
  }

  /** Clears the timers and the abort listener (a run that never started, or has settled). */
  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.spec.signal?.removeEventListener("abort", this.onAbort);
  }
}
