import { z } from "zod";
import { makeFolder } from "../edit/fileops.js";
import { defineTool, planPath } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("The folder to make, relative to the workspace root; missing parents are made too."),
    dry_run: dryRunField(),
  });

export default defineTool({
  name: "create_directory",
  aliases: ["make_directory"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: false, idempotent: true },
  description:
    "Make a folder and any missing parents. A folder that already exists is fine (created: false); a file in the way is an error.",
  schema,
  async plan(args, env) {
    const p = await planPath(args.path, env, true);
    return p;
  },
  async run(args, plan, env) {
    if (args.dry_run)
      return { result: { dry_run: true, written: false, path: showName(plan.target.rel), exists: plan.target.exists } };
    const created = await makeFolder(env.mutation, plan.target);
    return { result: { path: showName(plan.target.rel), created } };
  },
});
