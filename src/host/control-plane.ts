// Latch's control plane: everything it loads or keeps, which no tool may read or change (the one
// resolver refuses it, walks hide it, shell arguments may not name it, the sandbox hides it). The state
// dir, the config file, the policy logs, each policy program and the folder it sits in, and the user's
// and the operator's skill folders. A policy program inside the workspace is refused at start: a tool
// could rewrite it between two starts, and the next start would pin and run what the model wrote.
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { ConfigError } from "../config/load.js";
import type { Settings } from "../config/settings.js";
import { canonicalize, isInside } from "../fs/paths.js";
import type { PolicyProgram } from "../policy/programs.js";
import { trustedSkillDirs } from "../skills/files.js";

export interface LoadedFiles {
  /** The workspaces served (canonical): a policy program in one of them stops startup. */
  workspaces: readonly string[];
  /** Where relative `_skill_dirs` resolve (the first root). */
  root: string;
  programs: readonly PolicyProgram[];
  settings: Settings;
  startupEnv: Readonly<NodeJS.ProcessEnv>;
}

/** The policy programs and skill folders, canonical, for the control plane; throws for a program in a workspace. */
export async function loadedControlPlane(l: LoadedFiles): Promise<string[]> {
  const out: string[] = [];
  for (const prog of l.programs) {
    const real = await canonicalize(prog.path);
    const ws = l.workspaces.find((w) => isInside(w, real));
    if (ws !== undefined)
      throw new ConfigError(
        `The policy program \`${prog.path}\` is inside the workspace ${ws}: a tool could rewrite it, and the next start would run what it wrote. Move it outside the workspace (for example to ~/.config/latch/policy/) and pass the new path with --policy or in policy_programs.`,
      );
    out.push(real);
    for (const f of folderOf(real, l.workspaces)) out.push(f);
  }
  for (const t of trustedSkillDirs({ root: l.root, settings: l.settings, startupEnv: l.startupEnv })) {
    const real = await canonicalize(t.dir);
    // A skill folder that holds a workspace would close the whole workspace: it stays readable by its
    // own rule (the skill tool), and the workspace's files keep theirs.
    if (!l.workspaces.some((w) => isInside(real, w))) out.push(real);
  }
  return [...new Set(out)];
}

/**
 * The folder a program sits in, when a tool could reach it: a program renamed over, or its folder moved
 * away and back, would be a new program at the next start. Not a folder that holds a workspace (that
 * would close every file; the program itself stays listed), nor one this user cannot write (/usr/bin).
 */
function folderOf(real: string, workspaces: readonly string[]): string[] {
  const dir = path.dirname(real);
  if (workspaces.some((w) => isInside(dir, w))) return [];
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return []; // not writable by this user, so by no tool latch runs either
  }
  return [dir];
}
