import { z } from "zod";
import { ToolError } from "../errors.js";
import { listDir } from "../browse/list.js";
import { statTarget } from "../browse/target.js";
import { defineTool, planPath } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().default(".").describe("Folder to list, relative to the workspace root. Default: the root."),
    recursive: z.boolean().default(false).describe("List subfolders too, down to max_depth."),
    max_depth: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe("How deep a recursive listing goes (1 = this folder only). Default 3."),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Skip this many entries: pass the next_offset of a previous page (next_cursor is faster)."),
    cursor: z
      .string()
      .optional()
      .describe(
        "Continue a long listing where the previous page ended: pass its next_cursor (offset is then ignored).",
      ),
  });

/** A cursor names the folder listed and the last entry shown; opaque to the model. */
function encodeCursor(start: string, after: string): string {
  return Buffer.from(JSON.stringify([start, after]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string, start: string): string {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || v.length !== 2 || v[0] !== start || typeof v[1] !== "string")
    throw new ToolError(
      "EINVAL",
      `\`cursor\` is not a next_cursor of a listing of \`${start}\`. Pass the next_cursor list_dir returned for this path, or leave it out to start over.`,
    );
  return v[1];
}

export default defineTool({
  name: "list_dir",
  aliases: ["ls"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "List a folder, one entry a line, sorted: folders end in /, executables carry *, symbolic links @, and files over 1 MiB show their size.",
    "Skips gitignored entries, .git and node_modules. Long listings come in pages: pass next_cursor as cursor to continue. Names holding control characters (a newline, a tab), bytes that are not UTF-8 or characters that hide text (bidi controls) are shown escaped (\\n, \\t, \\xhh, \\uhhhh, and their backslashes as \\\\); that form is accepted back as a path. Entries the policy closes (credentials, denied paths) are left out unnamed and unsearched; `hidden` counts them.",
  ].join(" "),
  schema,
  async plan(args, env) {
    const { paths, target } = await planPath(args.path, env);
    if (!(await statTarget(target)).isDirectory()) {
      throw new ToolError(
        "ENOTDIR",
        `\`${showName(target.rel)}\` is a file, not a folder. Use stat_file or read_file on it, or list its folder.`,
      );
    }
    return { paths, target, walks: [target] };
  },
  async run(args, plan, env) {
    const out = await listDir({
      root: env.root,
      start: plan.target,
      maxDepth: args.recursive ? args.max_depth : 1,
      offset: args.cursor === undefined ? args.offset : 0,
      after: args.cursor === undefined ? undefined : decodeCursor(args.cursor, plan.target.rel),
      maxOutputBytes: env.settings.local_fs.maxOutputBytes,
      visibility: env.visibility,
      resolve: (rel) => env.resolve(rel),
      signal: env.signal,
      onProgress: (seen) => env.progress({ progress: seen, message: `${seen} entries walked` }),
    });
    const result: Record<string, unknown> = {
      path: showName(plan.target.rel),
      entries: out.entries.join("\n"),
      count: out.entries.length,
      offset: args.offset,
    };
    if (out.hidden > 0) result.hidden = out.hidden;
    const notes: string[] = [];
    if (out.nextOffset !== undefined) {
      if (out.nextAfter !== undefined) result.next_cursor = encodeCursor(plan.target.rel, out.nextAfter);
      if (args.cursor === undefined) result.next_offset = out.nextOffset;
      notes.push("More entries remain: pass next_cursor as cursor to continue.");
    }
    if (out.entries.length === 0 && out.nextOffset === undefined)
      notes.push(
        args.cursor !== undefined
          ? "No entries after the cursor."
          : args.offset > 0
            ? `No entries past offset ${args.offset}.`
            : "The folder is empty (or holds only hidden entries).",
      );
    if (out.ignored > 0)
      notes.push(`${out.ignored} gitignored entr${out.ignored === 1 ? "y was" : "ies were"} left out.`);
    if (notes.length) result.note = notes.join(" ");
    return { result };
  },
});
