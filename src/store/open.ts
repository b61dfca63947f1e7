// Which state store a latch uses: `--state postgres://…` (or LATCH_STATE_URL) for a fleet's
// PostgreSQL, else the state dir's SQLite. The PostgreSQL driver is loaded only for a postgres URL.
import { ToolError } from "../errors.js";
import { sqliteStore } from "./sqlite.js";
import type { StateStore } from "./types.js";

/** The URL from the flag, else LATCH_STATE_URL; undefined for the local store. Throws EINVAL for another scheme. */
export function stateUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag ?? (env.LATCH_STATE_URL || undefined);
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new ToolError(
      "EINVAL",
      `Expected --state (or LATCH_STATE_URL) to be a postgres:// URL, got \`${url.replace(/:[^:@/]*@/, ":***@")}\`. Leave it out to keep the state in the state dir.`,
    );
  return url;
}

export async function openStore(url: string | undefined, state: { dir: string; db: string }): Promise<StateStore> {
  if (url === undefined) return sqliteStore(state.db);
  const { PgStore } = await import("./pg.js");
  return PgStore.open(url, state.dir);
}
