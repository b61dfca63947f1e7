import { z } from "zod";
import { ToolError } from "../errors.js";
import { basesOf, commitChanges, readCurrents, type Bases } from "../edit/changeset.js";
import { removeEmptyFolder } from "../edit/fileops.js";
import type { ResolvedPath } from "../fs/paths.js";
import { defineTool, type Plan } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { buildDiff } from "../edit/diff.js";
import { diffDisplay, noDiffDisplay } from "./write-display.js";
import { showName } from "../fs/names.js";
import { lstatBeneath } from "../fs/beneath.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("The file (or empty folder) to delete, relative to the workspace root."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

interface DeletePlan extends Plan {
  paths: ResolvedPath[];
  target: ResolvedPath;
  bases: Bases;
}

async function isFolder(p: ResolvedPath): Promise<boolean> {
  return lstatBeneath(p, "deleting")?.isDirectory() ?? false;
}

export default defineTool({
  name: "delete_file",
  aliases: ["remove_file"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Delete one file, or one empty folder. A file needs a read of its current content in this session first (what is deleted is what you saw).",
    "A folder that is not empty is refused: delete its files first.",
  ].join(" "),
  schema,
  async plan(args, env): Promise<DeletePlan> {
    const target = await env.resolve(args.path, { forWrite: true });
    return { paths: [target], target, bases: basesOf(env.mutation, [target]) };
  },
  async run(args, plan, env) {
    if (await isFolder(plan.target)) {
      await removeEmptyFolder(env.mutation, plan.target);
      return {
        result: { deleted: showName(plan.target.rel), kind: "folder" },
        display: noDiffDisplay("no diff: an empty folder was removed"),
      };
    }
    let before: Buffer | null = null;
    const expected = args.expected_sha256 === undefined ? undefined : { [plan.target.abs]: args.expected_sha256 };
    const out = await commitChanges(
      env.mutation,
      [plan.target],
      plan.bases,
      (currents) => {
        before = currents.get(plan.target.abs) ?? null;
        if (before === null) throw missing(plan.target);
        return [{ target: plan.target, after: null, needs: "range" }];
      },
      expected,
    );
    return {
      result: { deleted: showName(plan.target.rel), kind: "file", ...(out.warning ? { warning: out.warning } : {}) },
      display: diffDisplay(buildDiff(plan.target.rel, before, null)),
    };
  },
  async preview(args, plan) {
    if (await isFolder(plan.target)) return { before: null, after: Buffer.alloc(0), files: [] };
    const before = (await readCurrents([plan.target])).get(plan.target.abs) ?? null;
    if (before === null) throw missing(plan.target);
    const files = [{ rel: plan.target.rel, before, after: null, source: plan.target, needs: "range" as const }];
    return { before: null, after: Buffer.alloc(0), files };
  },
});

function missing(target: ResolvedPath): ToolError {
  return new ToolError(
    "ENOENT",
    `\`${showName(target.rel)}\` does not exist; nothing was deleted. Check the path with list_dir.`,
  );
}
