// `dry_run: true` on a write tool: the exact diff its write would make, from the same preview the
// approver sees, after the same read-before-write check (so a dry run that succeeds says the real
// call would too, unless the file changes meanwhile). Nothing is written and no read is recorded.
// The call is still decided like the write it previews (a person may be asked) and logged.
import { z } from "zod";
import { buildDiff, buildFilesDiff } from "../edit/diff.js";
import { checkReadBeforeWrite } from "../edit/mutate.js";
import { sha256 } from "../fs/text.js";
import type { Plan, PreviewFile, ToolEnv, ToolOutput, ToolSpec } from "./define.js";
import { showName } from "../fs/names.js";

export const dryRunField = () =>
  z
    .boolean()
    .optional()
    .describe("true: write nothing; return the exact diff this call would make (after the same checks).");

export function isDryRun(tool: ToolSpec, args: unknown): boolean {
  return tool.preview !== undefined && (args as { dry_run?: unknown } | null)?.dry_run === true;
}

export async function dryRun(tool: ToolSpec, args: unknown, plan: Plan, env: ToolEnv): Promise<ToolOutput> {
  const p = await tool.preview!(args, plan, env);
  const target = plan.paths?.[0];
  const files: PreviewFile[] =
    p.files ??
    (target ? [{ rel: target.rel, before: p.before, after: p.after, source: target, needs: p.needs ?? "range" }] : []);
  for (const f of files) {
    if (f.before !== null && f.needs !== undefined)
      checkReadBeforeWrite(env.mutation, f.source, sha256(f.before), f.needs);
  }
  const d = p.files ? buildFilesDiff(p.files) : buildDiff(target?.rel ?? "file", p.before, p.after);
  const changed = files.filter(
    (f) => f.after === null || f.before === null || f.fromRel !== undefined || !f.before.equals(f.after),
  );
  return {
    result: {
      dry_run: true,
      written: false,
      files: changed.map((f) => ({
        path: showName(f.rel),
        ...(f.fromRel ? { from: f.fromRel } : {}),
        action: f.after === null ? "delete" : f.fromRel ? "move" : f.before === null ? "add" : "update",
      })),
      diff: d.diff ?? "",
      ...(d.note ? { note: d.note } : {}),
    },
  };
}
