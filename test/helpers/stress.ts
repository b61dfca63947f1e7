// Loop counts of the stress and fault tests. `npm run test:stress` sets LATCH_STRESS=1 and runs them
// in full; `npm test` runs each one small, at a count that still fails on the bug it was written for
// (each caller says which). An environment variable of the test's own, when set, overrides both.

/** Whether this run is the full stress run (LATCH_STRESS=1). */
export const FULL_STRESS = process.env.LATCH_STRESS === "1";

/** `full` under LATCH_STRESS=1, else `small`; `override` (an environment variable's name) wins when set. */
export function stressCount(small: number, full: number, override?: string): number {
  const own = override === undefined ? undefined : process.env[override];
  if (own !== undefined && own !== "") {
    const n = Number(own);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${override} must be a whole number of at least 1, got ${own}`);
    return n;
  }
  return FULL_STRESS ? full : small;
}
