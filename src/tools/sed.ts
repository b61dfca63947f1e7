import { z } from "zod";
import { ToolError, expected } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { decodeExact, mutationSummary, prepareNeedle, replaceIn } from "../edit/replace.js";
import { defineTool, editInPlace, planWrite } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root."),
    pattern: z.string().min(1).describe("Plain text to find (not a regular expression)."),
    replacement: z.string().describe("Plain text to put in its place."),
    all: z.boolean().optional().describe("Replace every occurrence in the range instead of requiring exactly one."),
    expect_replacements: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("The number of occurrences you expect; any other count changes nothing and reports the count found."),
    start_line: z.number().int().min(1).optional().describe("First line of the range to search (1-based)."),
    end_line: z.number().int().min(1).optional().describe("Last line of the range to search (inclusive)."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

/** The character span [from, to) of lines start..end (1-based, inclusive) of `text`. */
function lineSpan(text: string, start: number, end: number | undefined): { from: number; to: number; lines: number } {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  const lines = starts[starts.length - 1] === text.length ? starts.length - 1 : starts.length;
  if (start > Math.max(lines, 1))
    throw new ToolError("ERANGE", expected("start_line", `at most the file's line count (${lines})`, start) + ".");
  const last = Math.min(end ?? lines, lines);
  return { from: starts[start - 1], to: last >= starts.length ? text.length : (starts[last] ?? text.length), lines };
}

type Args = z.infer<ReturnType<typeof schema>>;

function checkArgs(args: Args): void {
  if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) {
    throw new ToolError(
      "EINVAL",
      expected("end_line", `at least start_line (${args.start_line})`, args.end_line) + ".",
    );
  }
}

/** The pure replacement, line range and counts applied: run and the approval preview both use it. */
function transform(
  args: Args,
  target: ResolvedPath,
  current: Buffer | null,
): { after: Buffer | string; replacements: number } {
  if (current === null)
    throw new ToolError("ENOENT", `\`${showName(target.rel)}\` does not exist. Create it with write_file.`);
  const text = decodeExact(current, target);
  const span = lineSpan(text, args.start_line ?? 1, args.end_line);
  const region = text.slice(span.from, span.to);
  const needle = prepareNeedle(region, args.pattern, args.replacement);
  const where =
    args.start_line !== undefined || args.end_line !== undefined
      ? ` in lines ${args.start_line ?? 1}-${args.end_line ?? span.lines}`
      : "";
  const want = args.expect_replacements ?? (args.all ? needle.count : 1);
  if (needle.count !== want) {
    throw new ToolError(
      needle.count === 0 ? "ENOMATCH" : "ECOUNT",
      `Found ${needle.count} occurrence${needle.count === 1 ? "" : "s"} of pattern${where} of \`${showName(target.rel)}\`, expected ${want}; the file is unchanged.` +
        (needle.count > want && args.expect_replacements === undefined
          ? " Set all to replace every one, or narrow the line range."
          : " Read the file again and adjust pattern, range or expect_replacements."),
    );
  }
  if (needle.count === 0) return { after: current, replacements: 0 };
  const replaceAll = args.all === true || args.expect_replacements !== undefined;
  return {
    after: text.slice(0, span.from) + replaceIn(region, needle, replaceAll) + text.slice(span.to),
    replacements: needle.count,
  };
}

export default defineTool({
  name: "sed",
  aliases: ["replace"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace", "client"],
  clientNeeds: ["read", "write"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Replace plain text (no regular expressions) in a file, optionally only between start_line and end_line.",
    "By default exactly one occurrence must be found; set all to replace every one, and expect_replacements to state how many you expect — any other count leaves the file unchanged and tells you the count found.",
    "Needs a read_file or read_file_range of the file's current content in this session first.",
  ].join(" "),
  schema,
  plan: (args, env) => planWrite(args.path, env, args.expected_sha256),
  async run(args, plan, env) {
    const { target } = plan;
    checkArgs(args);
    const { out, made, display } = await editInPlace(env, plan, (current) => transform(args, target, current));
    return {
      result: { ...mutationSummary(target, out), replacements: made.replacements, changed: out.written },
      display,
    };
  },
  async preview(args, plan, env) {
    checkArgs(args);
    const before = await env.files.read(plan.target, env.signal);
    const t = transform(args, plan.target, before);
    return { before, after: Buffer.isBuffer(t.after) ? t.after : Buffer.from(t.after, "utf8") };
  },
});
