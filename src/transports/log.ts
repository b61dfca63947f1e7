// Diagnostics for the servers: stderr only (stdout is the MCP protocol), level from LATCH_LOG.
const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
export type Level = keyof typeof LEVELS;

// A closed stderr (the client took the pipe away) must not turn a log line into a crash.
process.stderr.on("error", () => undefined);

function threshold(): number {
  const want = (process.env.LATCH_LOG ?? "warn").toLowerCase();
  return want in LEVELS ? LEVELS[want as Level] : LEVELS.warn;
}

export function log(level: Level, message: string): void {
  if (LEVELS[level] > threshold()) return;
  process.stderr.write(`latch ${level}: ${message}\n`);
}

/** What the start-up clean-up removed after killed runs (src/host/recover.ts), if anything. */
export function reportRecovered(r: { runs: number; processes: number; temps: number; locks: number }): void {
  if (r.processes + r.temps + r.locks === 0) return;
  log(
    "warn",
    `${r.runs} earlier latch run(s) ended without cleaning up; removed ${r.processes} leftover process(es), ${r.temps} temp file(s) and ${r.locks} lock(s).`,
  );
}
