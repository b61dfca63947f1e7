// The cooperative time budget of one AST call (`_ast_deadline`): work checks `spent()` between files
// and every few hundred nodes, stops cleanly, and reports how far it got. The call's own abort
// signal (a client's cancel) stops it the same way.

export interface Budget {
  readonly ms: number;
  spent(): boolean;
  /** Why it stopped, for the result's note. */
  reason(): "deadline" | "cancelled" | undefined;
  elapsedMs(): number;
}

export function startBudget(ms: number, signal?: AbortSignal, now: () => number = Date.now): Budget {
  const started = now();
  let why: "deadline" | "cancelled" | undefined;
  return {
    ms,
    spent() {
      if (why) return true;
      if (signal?.aborted) why = "cancelled";
      else if (now() - started >= ms) why = "deadline";
      return why !== undefined;
    },
    reason: () => why,
    elapsedMs: () => now() - started,
  };
}
