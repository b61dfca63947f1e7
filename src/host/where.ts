// A path that does not exist where relative paths resolve, but does where the model may have meant:
// the workspace above `_allowed_dir`, or another served root. "Does not exist" alone sends the model
// hunting; the note names the folder relative paths start from and the path that would reach the file.
import { existsSync } from "node:fs";
import path from "node:path";
import { ToolError } from "../errors.js";
import { inControlPlane, isInside, toRel, type ResolvedPath } from "../fs/paths.js";

export interface WhereRoots {
  /** Where relative paths resolve: the workspace, or its `_allowed_dir`. */
  root: string;
  /** The workspace `root` belongs to. */
  workspace: string;
  otherRoots?: readonly string[];
  controlPlane: readonly string[];
}

/** The ENOENT error with a note, when one of the plan's missing relative paths exists from another start. */
export function withWhereNote(
  roots: WhereRoots,
  paths: readonly ResolvedPath[] | undefined,
  err: ToolError,
): ToolError {
  for (const p of paths ?? []) {
    if (p.exists || path.isAbsolute(p.input)) continue;
    const note = whereNote(roots, p.input);
    if (note) return new ToolError(err.code, `${err.message} ${note}`);
  }
  return err;
}

function whereNote(r: WhereRoots, input: string): string | undefined {
  const starts = [...(r.workspace !== r.root ? [r.workspace] : []), ...(r.otherRoots ?? [])];
  const limited = r.workspace !== r.root ? " (tools_policies.local_fs._allowed_dir)" : "";
  for (const start of starts) {
    const there = path.resolve(start, input);
    // Only what lies inside that start, outside latch's own files: the note never probes elsewhere.
    if (!isInside(start, there) || inControlPlane(there, r.controlPlane) || !existsSync(there)) continue;
    if (isInside(r.root, there))
      return `Relative paths resolve in ${r.root}${limited}, not in ${start}: this one is \`${toRel(r.root, there)}\`.`;
    if (r.otherRoots?.includes(start))
      return `Relative paths resolve in ${r.root}; ${there} is in another root latch serves: write it absolute, \`${there}\`.`;
    return `Relative paths resolve in ${r.root}${limited}, not in ${start}; ${there} exists but is outside that folder, so latch's file tools cannot reach it.`;
  }
  return undefined;
}
