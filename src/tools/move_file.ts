import { z } from "zod";
import { readCurrentBytes } from "../fs/current.js";
import { moveFile } from "../edit/fileops.js";
import { baseOf } from "../edit/mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
import { defineTool, type Plan, type PreviewFile } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { buildDiff } from "../edit/diff.js";
import { diffDisplay } from "./write-display.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    from: z.string().describe("The file to move, relative to the workspace root."),
    to: z
      .string()
      .describe("Its new path (folder and name), relative to the workspace root. Missing folders are made."),
    overwrite: z
      .boolean()
      .optional()
      .describe("Replace an existing file at `to` (it must have been read whole in this session). Default false."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

interface MovePlan extends Plan {
  paths: ResolvedPath[];
  from: ResolvedPath;
  to: ResolvedPath;
  destBase: string | null;
}

export default defineTool({
  name: "move_file",
  aliases: ["rename_file"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Move or rename one file inside the workspace, atomically (the content is not rewritten). Missing folders of `to` are made.",
    "An existing file at `to` is not replaced unless overwrite is true, and then only after a full read of it in this session.",
    "Your reads of the file count at its new path. Folders are not moved (use the shell).",
  ].join(" "),
  schema,
  async plan(args, env): Promise<MovePlan> {
    const from = await env.resolve(args.from, { forWrite: true });
    const to = await env.resolve(args.to, { forWrite: true });
    return { paths: [from, to], from, to, destBase: baseOf(env.mutation, to) };
  },
  async run(args, plan, env) {
    const out = await moveFile(env.mutation, plan.from, plan.to, {
      overwrite: args.overwrite === true,
      destBase: plan.destBase,
      ...(args.expected_sha256 !== undefined ? { expected: args.expected_sha256 } : {}),
    });
    const warning = out.warning ? { warning: out.warning } : {};
    return {
      result: {
        moved: true,
        from: showName(plan.from.rel),
        to: showName(plan.to.rel),
        overwrote: out.overwrote,
        ...warning,
      },
      // The content moves unchanged: the rename headers are the whole diff (an overwritten file's old content is not read again).
      display: diffDisplay(
        buildDiff(plan.to.rel, Buffer.alloc(0), Buffer.alloc(0), plan.from.rel),
        out.overwrote ? `${showName(plan.to.rel)} was overwritten; its old content is not shown` : undefined,
      ),
    };
  },
  async preview(args, plan) {
    const content = await readCurrentBytes(plan.from);
    const dest = args.overwrite ? await readCurrentBytes(plan.to) : null;
    const files: PreviewFile[] = [];
    if (dest !== null) files.push({ rel: plan.to.rel, before: dest, after: null, source: plan.to, needs: "full" });
    files.push({ rel: plan.to.rel, fromRel: plan.from.rel, before: content, after: content, source: plan.from });
    return { before: null, after: Buffer.alloc(0), files };
  },
});
