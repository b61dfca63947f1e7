// How long a call that needs approval waits on the queue when the client cannot ask a person: apart
// from server.ts, so that `latch mcp` checks the setting before it loads the MCP SDK (src/cli/mcp.ts).

const DEFAULT_APPROVAL_WAIT_S = 60;

/** LATCH_APPROVAL_WAIT (seconds, set by `latch mcp --approval-wait`), else 60; checked at startup by the CLI. */
export function approvalWaitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LATCH_APPROVAL_WAIT;
  if (raw === undefined || raw === "") return DEFAULT_APPROVAL_WAIT_S;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`Expected LATCH_APPROVAL_WAIT (--approval-wait) to be a whole number of seconds, got \`${raw}\``);
  return n;
}
