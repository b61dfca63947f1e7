// Where the config file is when no --config or LATCH_CONFIG names it, apart from load.ts (which parses
// it), so that the command's entry can look for it before the program loads
// (src/transports/mcp/plain-start.ts).
import os from "node:os";
import path from "node:path";

export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(os.homedir(), ".config");
  return path.join(base, "latch", "agents.toml");
}
