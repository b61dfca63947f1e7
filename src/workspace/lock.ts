// Cross-process mutation locks, keyed by the canonical path's hash and kept in the state dir, never
// beside the file (a lock file in the workspace would be a write nobody asked for).
import lockfile from "proper-lockfile";
import path from "node:path";
import { ToolError } from "../errors.js";
import { sha256 } from "./text.js";

export async function withPathLock<T>(locksDir: string, canonical: string, fn: () => Promise<T>): Promise<T> {
  const lockPath = path.join(locksDir, sha256(canonical) + ".lock");
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(canonical, {
      lockfilePath: lockPath,
      realpath: false,
      stale: 10_000,
      retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 50 },
      onCompromised: (err) => {
        compromised = err;
      },
    });
  } catch (err) {
    if ((err as { code?: string }).code === "ELOCKED") {
      throw new ToolError("ELOCKED", `Another writer holds \`${canonical}\` for too long. Retry in a moment.`);
    }
    throw err;
  }
  try {
    const out = await fn();
    if (compromised) throw new ToolError("ELOCKED", `The lock on \`${canonical}\` was lost while writing: ${compromised.message}`);
    return out;
  } finally {
    await release().catch(() => undefined); // a lock already taken over as stale has nothing left to release
  }
}
