import path from "node:path";
import { z } from "zod";
import { statTarget } from "../browse/target.js";
import { describePath } from "../browse/stats.js";
import { defineTool, planPath } from "./define.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("File or folder, relative to the workspace root."),
  });

export default defineTool({
  name: "stat_file",
  aliases: ["stat"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description:
    "Metadata of a file or folder without reading it: {name, size, size_human, mtime (ISO 8601), is_dir, is_symlink, mode (octal), executable, binary}.",
  schema,
  async plan(args, env) {
    const planned = await planPath(args.path, env);
    await statTarget(planned.target);
    return planned;
  },
  async run(args, plan, env) {
    // is_symlink is about the name asked for; the resolver already held it inside the root.
    return { result: await describePath(plan.target, path.resolve(env.root, args.path)) };
  },
});
