import { z } from "zod";
import { ToolError } from "../errors.js";
import { findFiles } from "../browse/find.js";
import { statTarget } from "../browse/target.js";
import { showName } from "../fs/names.js";
import { defineTool, planPath } from "./define.js";

const schema = () =>
  z.strictObject({
    pattern: z
      .string()
      .min(1)
      .describe(
        'A glob with ** support, such as "*.ts" (matches base names) or "src/**/test_*.py" (matches the path under `path`).',
      ),
    path: z
      .string()
      .default(".")
      .describe("Folder to search, relative to the workspace root. Default: the whole workspace."),
  });

export default defineTool({
  name: "find_files",
  aliases: ["glob"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Find files by name with a glob. A pattern without a slash matches the base name anywhere below path; with a slash it matches the path relative to path.",
    "Skips gitignored files, .git and node_modules. Returns {matches, count, truncated}, sorted; count is the total even when the list is capped Entries the policy closes (credentials, denied paths) are left out unnamed and unsearched; `hidden` counts them.",
  ].join(" "),
  schema,
  async plan(args, env) {
    const { paths, target } = await planPath(args.path, env);
    if (!(await statTarget(target)).isDirectory()) {
      throw new ToolError(
        "ENOTDIR",
        `\`${showName(target.rel)}\` is a file; find_files searches a folder. Pass its folder as path, or use stat_file.`,
      );
    }
    return { paths, target, walks: [target] };
  },
  async run(args, plan, env) {
    env.progress({ progress: 0, message: `walking ${showName(plan.target.rel)} for ${args.pattern}` });
    const out = await findFiles({
      root: env.root,
      start: plan.target,
      pattern: args.pattern,
      max: env.settings.local_fs.maxFindResults,
      visibility: env.visibility,
      resolve: (rel) => env.resolve(rel),
      signal: env.signal,
      onProgress: (seen) => env.progress({ progress: seen, message: `${seen} entries walked` }),
      index: env.folderIndex,
    });
    const { hidden, ...listing } = out;
    const result: Record<string, unknown> = {
      ...listing,
      matches: listing.matches.map(showName), // as every tool shows a name (src/fs/names.ts)
      ...(hidden > 0 ? { hidden } : {}),
    };
    if (out.truncated) {
      result.note = `Showing the first ${out.matches.length} of ${out.count} files (_max_find_results = ${env.settings.local_fs.maxFindResults}). Narrow the pattern or pass a subfolder as path.`;
    }
    return { result };
  },
});
