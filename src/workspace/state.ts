// Where latch keeps its own state: the ledger database, mutation locks and default policy logs.
import { mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LATCH_STATE_DIR) return path.resolve(env.LATCH_STATE_DIR);
  if (env.XDG_STATE_HOME) return path.join(path.resolve(env.XDG_STATE_HOME), "latch");
  return path.join(os.homedir(), ".local", "state", "latch");
}

export interface StateDir {
  dir: string;
  locks: string;
  db: string;
}

/** Create (mode 0700) and canonicalise the state dir, so the control-plane check can compare real paths. */
export function openStateDir(dir: string): StateDir {
  mkdirSync(path.join(dir, "locks"), { recursive: true, mode: 0o700 });
  const real = realpathSync(dir);
  return { dir: real, locks: path.join(real, "locks"), db: path.join(real, "latch.db") };
}
