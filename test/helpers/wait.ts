// Polling for what a test cannot await directly: a process gone, a file written, a log line seen.
// Generous by default, because a loaded CI machine is slow, and the answer is checked once more at
// the end so a condition that became true during the last sleep still counts.

/** Polls `cond` every 25 ms until it holds or `ms` pass; returns whether it held. */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}
