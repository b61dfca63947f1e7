import { z } from "zod";
import { ToolError } from "../errors.js";
import { readCurrentBytes } from "../workspace/current.js";
import type { ResolvedPath } from "../workspace/paths.js";
import { mutate } from "../workspace/mutate.js";
import { isLargeFile, replaceStreamed } from "../workspace/mutate-stream.js";
import {
  closestLines,
  decodeExact,
  missingFile,
  mutationSummary,
  noMatch,
  occurrenceLines,
  prepareNeedle,
  replaceIn,
  summaryOf,
  tooMany,
} from "../workspace/replace.js";
import { defineTool, planWrite } from "./define.js";

const schema = z.strictObject({
  path: z.string().describe("File path, relative to the workspace root."),
  old_string: z.string().min(1).describe("The exact text to replace, whitespace included, as it is in the file now."),
  new_string: z.string().describe("The text to put in its place."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one."),
});

type Args = z.infer<typeof schema>;

function checkArgs(args: Args): void {
  if (args.old_string === args.new_string) {
    throw new ToolError(
      "EINVAL",
      "`old_string` and `new_string` are the same, so there is nothing to change. Pass the new text as new_string.",
    );
  }
}

/** The pure edit: the new text from the current bytes; run and the approval preview both use it. */
function transform(args: Args, target: ResolvedPath, current: Buffer | null): { after: string; replacements: number } {
  if (current === null) throw missingFile(target);
  const text = decodeExact(current, target);
  const needle = prepareNeedle(text, args.old_string, args.new_string);
  if (needle.count === 0) {
    const near = closestLines(text, args.old_string);
    throw noMatch(target, near ? `The closest lines are:\n${near}` : "");
  }
  if (needle.count > 1 && !args.replace_all) throw tooMany(target, needle.count, occurrenceLines(text, needle.find));
  return {
    after: replaceIn(text, needle, args.replace_all === true),
    replacements: args.replace_all ? needle.count : 1,
  };
}

export default defineTool({
  name: "edit_file",
  aliases: ["edit", "str_replace"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace", "client"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Replace one exact occurrence of old_string with new_string in an existing file: the preferred way to change part of a file.",
    "old_string must match the current file byte for byte, whitespace included, and occur exactly once (add surrounding lines to make it unique), unless replace_all is true.",
    "Needs a read_file or read_file_range of the file's current content in this session first. On no match, the error quotes the closest lines with their numbers.",
  ].join(" "),
  schema,
  plan: (args, env) => planWrite(args.path, env),
  async run(args, plan, env) {
    const { target } = plan;
    checkArgs(args);
    if (await isLargeFile(target)) {
      const big = await replaceStreamed(env.mutation, {
        target,
        find: args.old_string,
        replace: args.new_string,
        all: args.replace_all === true,
        expectSha: plan.base,
      });
      return { result: { ...summaryOf(target, big.before, big.after, big.written), replacements: big.replacements } };
    }
    let replacements = 0;
    const out = await mutate(env.mutation, {
      target,
      needs: "range",
      expectSha: plan.base,
      apply(current) {
        const t = transform(args, target, current);
        replacements = t.replacements;
        return t.after;
      },
    });
    return { result: { ...mutationSummary(target, out), replacements } };
  },
  // Loads the whole file, even one run() streams: the diff builder takes both sides whole (bench/RESULTS.md, memory).
  async preview(args, plan) {
    checkArgs(args);
    const before = await readCurrentBytes(plan.target);
    return { before, after: Buffer.from(transform(args, plan.target, before).after, "utf8") };
  },
});
