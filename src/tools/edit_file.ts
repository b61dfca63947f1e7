import { z } from "zod";
import { ToolError } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { isLargeFile, replaceStreamed, STREAM_EDIT_ABOVE } from "../edit/mutate-stream.js";
import { applyEdits, checkEdits, type StringEdit } from "../edit/multi-edit.js";
import { decodeExact, missingFile, mutationSummary, summaryOf } from "../edit/replace.js";
import { defineTool, editInPlace, planWrite } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { noDiffDisplay } from "./write-display.js";

const edit = () =>
  z.strictObject({
    old_string: z.string().min(1).describe("The exact text to replace, as the edits before this one left the file."),
    new_string: z.string().describe("The text to put in its place."),
    replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one."),
  });

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root."),
    old_string: z
      .string()
      .min(1)
      .optional()
      .describe("The exact text to replace, whitespace included, as it is in the file now."),
    new_string: z.string().optional().describe("The text to put in its place."),
    replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one."),
    edits: z
      .array(edit())
      .min(1)
      .max(200)
      .optional()
      .describe("Several edits instead of old_string/new_string: applied in order, all or none, in one write."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

type Args = z.infer<ReturnType<typeof schema>>;

/** The edits of a call: `edits`, or the one old_string/new_string pair. */
function editsOf(args: Args): StringEdit[] {
  const single = args.old_string !== undefined || args.new_string !== undefined || args.replace_all !== undefined;
  if (args.edits && single)
    throw new ToolError("EINVAL", "Pass either `edits` or old_string/new_string (with replace_all), not both.");
  if (args.edits) return args.edits;
  if (args.old_string === undefined || args.new_string === undefined)
    throw new ToolError("EINVAL", "Pass old_string and new_string, or a list of `edits`.");
  return [{ old_string: args.old_string, new_string: args.new_string, replace_all: args.replace_all }];
}

function checkArgs(args: Args): StringEdit[] {
  const edits = editsOf(args);
  checkEdits(edits);
  return edits;
}

/** The pure edit: the new text from the current bytes; run and the approval preview both use it. */
function transform(
  edits: StringEdit[],
  target: ResolvedPath,
  current: Buffer | null,
): { after: string; replacements: number[] } {
  if (current === null) throw missingFile(target);
  return applyEdits(decodeExact(current, target), edits, target);
}

export default defineTool({
  name: "edit_file",
  aliases: ["edit", "str_replace"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace", "client"],
  clientNeeds: ["read", "write"],
  // Its writes (mutate() or a streamed edit) wait for the decision's sync before their rename.
  awaitsDecisionSync: true,
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Replace one exact occurrence of old_string with new_string in an existing file: the preferred way to change part of a file.",
    "For several changes to one file, pass `edits: [{old_string, new_string, replace_all?}]` instead: applied in order, each to the text the previous ones left, all or none.",
    "old_string must match the current file byte for byte, whitespace included, and occur exactly once (add surrounding lines to make it unique), unless replace_all is true.",
    "Needs a read_file or read_file_range of the file's current content in this session first. On no match, the error quotes the closest lines with their numbers.",
  ].join(" "),
  schema,
  plan: (args, env) => planWrite(args.path, env, args.expected_sha256),
  async run(args, plan, env) {
    const { target } = plan;
    const edits = checkArgs(args);
    if (edits.length === 1 && env.files.kind === "local" && (await isLargeFile(target))) {
      const big = await replaceStreamed(
        env.mutation,
        {
          target,
          find: edits[0].old_string,
          replace: edits[0].new_string,
          all: edits[0].replace_all === true,
          expectSha: plan.base,
          expected: plan.expected,
        },
        { above: STREAM_EDIT_ABOVE },
      );
      return {
        result: {
          ...summaryOf(target, big.before, big.after, big.written, big.warning),
          replacements: big.replacements,
        },
        display: noDiffDisplay(
          `no diff: the file is over ${STREAM_EDIT_ABOVE / 2 ** 20} MiB and was edited in a stream, without holding it whole`,
        ),
      };
    }
    const { out, made, display } = await editInPlace(env, plan, (current) => transform(edits, target, current));
    const total = made.replacements.reduce((a, b) => a + b, 0);
    const each = edits.length > 1 ? { replacements_per_edit: made.replacements } : {};
    return {
      result: { ...mutationSummary(target, out), replacements: total, ...each },
      display,
    };
  },
  // Loads the whole file, even one run() streams: the diff builder takes both sides whole (bench/RESULTS.md, memory).
  async preview(args, plan, env) {
    const edits = checkArgs(args);
    const before = await env.files.read(plan.target, env.signal);
    return { before, after: Buffer.from(transform(edits, plan.target, before).after, "utf8") };
  },
});
