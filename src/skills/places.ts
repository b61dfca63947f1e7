// Where skill folders are looked for, apart from files.ts (which reads them), so that the command's
// entry can see that there are none before the program loads (src/transports/mcp/plain-start.ts).
import { statSync } from "node:fs";
import path from "node:path";

/** The workspace's own skill folders, relative to the root, in discovery order. */
export const WORKSPACE_SKILL_DIRS = [".agents/skills", ".claude/skills"] as const;

/** The user's skill folder, from the environment latch started with; none without an absolute base. */
export function userSkillDir(startupEnv: Readonly<NodeJS.ProcessEnv>): string | undefined {
  const home = startupEnv.HOME;
  const xdg = startupEnv.XDG_CONFIG_HOME;
  const configBase =
    xdg && path.isAbsolute(xdg) ? xdg : home && path.isAbsolute(home) ? path.join(home, ".config") : "";
  return configBase ? path.join(configBase, "latch", "skills") : undefined;
}

/** Whether a place may hold skills: only a path that is missing, or under a file, holds none; any doubt says it may. */
export function mayHoldSkills(place: string): boolean {
  try {
    statSync(place);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}
