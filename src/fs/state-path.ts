// Where the state dir is when no --state-dir names it, apart from state.ts (which opens it), so that the
// command's entry can find it before the program loads (src/transports/mcp/answer-cache.ts).
import os from "node:os";
import path from "node:path";

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LATCH_STATE_DIR) return path.resolve(env.LATCH_STATE_DIR);
  if (env.XDG_STATE_HOME) return path.join(path.resolve(env.XDG_STATE_HOME), "latch");
  return path.join(os.homedir(), ".local", "state", "latch");
}
