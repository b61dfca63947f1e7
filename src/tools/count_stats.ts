import { z } from "zod";
import { countPath, countTree } from "../browse/stats.js";
import { requireFileOrFolder, statTarget } from "../browse/target.js";
import { defineTool, planPath } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z
      .string()
      .default(".")
      .describe("File or folder, relative to the workspace root. Default: the whole workspace."),
  });

export default defineTool({
  name: "count_stats",
  aliases: ["wc"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Count lines, words and bytes, like wc. For a file: {lines, words, bytes}.",
    "For a folder: the totals, the number of files and a breakdown by extension; gitignored files, .git and node_modules are skipped, binary files count in bytes only Entries the policy closes (credentials, denied paths) are left out unnamed and unsearched; `hidden` counts them.",
  ].join(" "),
  schema,
  async plan(args, env) {
    const { paths, target } = await planPath(args.path, env);
    const st = await statTarget(target);
    requireFileOrFolder(st, target);
    const isDir = st.isDirectory();
    return { paths, target, isDir, walks: isDir ? [target] : [] };
  },
  async run(_args, plan, env) {
    if (!plan.isDir) {
      const c = await countPath(plan.target, env.signal);
      return {
        result: {
          path: showName(plan.target.rel),
          lines: c.lines,
          words: c.words,
          bytes: c.bytes,
          ...(c.binary ? { binary: true } : {}),
        },
      };
    }
    env.progress({ progress: 0, message: `counting ${showName(plan.target.rel)}` });
    const result = await countTree({
      root: env.root,
      start: plan.target,
      visibility: env.visibility,
      resolve: (rel) => env.resolve(rel),
      signal: env.signal,
      onProgress: (files) => env.progress({ progress: files, message: `${files} files counted` }),
    });
    return { result };
  },
});
