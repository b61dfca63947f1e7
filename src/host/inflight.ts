// The calls a host is running, so a shutdown (a signal, a client gone) can cancel them, wait for
// them to finish through their own cleanup (a killed process group, a removed temp file, a released
// lock, a logged outcome), and refuse any call that arrives after it began.
import type { CallOptions, CallResult } from "./types.js";

/** How long a shutdown waits for cancelled calls to finish their cleanup before the host closes anyway. */
const SHUTDOWN_WAIT_MS = 5000;

interface Running {
  ctl: AbortController;
  done: Promise<CallResult>;
}

export class InFlight {
  private readonly running = new Set<Running>();
  private stopping: string | undefined;

  /** Why the host is shutting down, once it is. */
  get stopReason(): string | undefined {
    return this.stopping;
  }

  /** Run one call under a signal of its own, which the caller's signal and a shutdown both abort. */
  run(opts: CallOptions, call: (opts: CallOptions) => Promise<CallResult>): Promise<CallResult> {
    if (this.stopping !== undefined)
      return Promise.resolve({
        status: "error",
        code: "ESHUTDOWN",
        message: `latch is shutting down (${this.stopping}), so the call did not run. Retry it once latch runs again.`,
      });
    const ctl = new AbortController();
    const outer = opts.signal;
    const relay = () => ctl.abort(outer?.reason);
    if (outer?.aborted) ctl.abort(outer.reason);
    else outer?.addEventListener("abort", relay, { once: true });
    opts.cancel?.((reason) => ctl.abort(reason));
    const done = call({ ...opts, signal: ctl.signal });
    const entry: Running = { ctl, done };
    this.running.add(entry);
    const forget = () => {
      this.running.delete(entry);
      outer?.removeEventListener("abort", relay);
    };
    done.then(forget, forget);
    return done;
  }

  /** Resolves once no call is running (one started meanwhile is waited for too), or after `waitMs`. */
  idle(waitMs: number): Promise<void> {
    return whileRunning(() => [...this.running].map((c) => c.done), waitMs);
  }

  /** Cancel every running call and wait (at most `waitMs`) for them to end; returns how many there were. */
  async stop(why: string, waitMs = SHUTDOWN_WAIT_MS): Promise<number> {
    this.stopping ??= why;
    const calls = [...this.running];
    for (const c of calls) c.ctl.abort(new Error(why));
    if (calls.length === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.allSettled(calls.map((c) => c.done)), late]);
    clearTimeout(timer);
    return calls.length;
  }
}

/** Resolves once `running()` is empty (what starts meanwhile is waited for too), or after `waitMs`. */
export async function whileRunning(running: () => Promise<unknown>[], waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  for (let now = running(); now.length > 0 && Date.now() < until; now = running()) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, until - Date.now())));
    await Promise.race([Promise.allSettled(now), late]);
    clearTimeout(timer);
  }
}
