import { z } from "zod";
import { ToolError, expected } from "../errors.js";
import { anchorWindow } from "../edit/anchors.js";
import { readLineWindow } from "../fs/read-lines.js";
import type { ResolvedPath } from "../fs/paths.js";
import { defineTool, planPath, type ToolEnv } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root."),
    start_line: z
      .number()
      .int()
      .refine((n) => n !== 0, "start_line is 1-based (or negative, counting from the end); 0 is not a line")
      .default(1)
      .describe("First line to return (1-based). Negative counts from the end: -20 is the last 20 lines. Default 1."),
    end_line: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Last line to return (inclusive). Default: as many as fit in the output limit."),
    anchors: z.boolean().optional().describe("Show each line as `N#ID|text`, the anchors hash_edit takes."),
  });

/** Read a line window and record it in the ledger; read_file hands its line numbers here too. */
export async function readRange(
  target: ResolvedPath,
  start: number,
  end: number | undefined,
  env: ToolEnv,
  anchors = false,
) {
  if (end !== undefined && end < start)
    throw new ToolError("EINVAL", expected("end_line", `at least start_line (${start})`, end) + ".");
  const w = await readLineWindow(
    target,
    { start, end, maxOutputBytes: env.settings.local_fs.maxOutputBytes, signal: env.signal },
    env.files,
  );
  if (anchors) Object.assign(w, anchorWindow(w, env.settings.local_fs.maxOutputBytes));
  const whole = start === 1 && w.nextStartLine === undefined && w.cutLine === undefined && w.endLine === w.totalLines;
  env.recordRead(target.abs, w.sha256, whole ? "full" : "range");
  const result: Record<string, unknown> = {
    path: showName(target.rel),
    start_line: start,
    end_line: w.endLine,
    total_lines: w.totalLines,
    content: w.content,
    sha256: w.sha256,
  };
  if (start > w.totalLines) {
    result.note = `start_line ${start} is past the end: the file has ${w.totalLines} line${w.totalLines === 1 ? "" : "s"}.`;
  } else if (w.nextStartLine !== undefined) {
    result.next_start_line = w.nextStartLine;
    result.note = w.cutLine
      ? `Line ${w.cutLine} is longer than the output limit (${env.settings.local_fs.maxOutputBytes} bytes) and was cut. Continue with start_line ${w.nextStartLine}.`
      : `Output limit (${env.settings.local_fs.maxOutputBytes} bytes) reached after line ${w.endLine} of ${w.totalLines}. Continue with read_file_range start_line ${w.nextStartLine}.`;
  }
  if (anchors)
    result.anchors =
      w.cutLine === undefined
        ? "N#ID|text"
        : `N#ID|text; line ${w.cutLine} is cut and has no anchor (edit it with edit_file)`;
  return result;
}

/** A negative start_line as a line number: -1 is the last line; before the first, the first. */
async function fromEnd(target: ResolvedPath, start: number, env: ToolEnv): Promise<number> {
  // A window that starts past any file's end: the file is streamed once and only its lines counted.
  const w = await readLineWindow(target, { start: Number.MAX_SAFE_INTEGER, maxOutputBytes: 0, signal: env.signal });
  return Math.max(1, w.totalLines + start + 1);
}

export default defineTool({
  name: "read_file_range",
  aliases: ["read_lines"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client"],
  clientNeeds: ["read"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Read a range of lines of a text file (1-based, inclusive; a negative start_line counts from the end, -50 being the last 50 lines). Streams the file, so it works on files of any size.",
    "Use it for files too large for read_file, or to continue where a cut read stopped (its note gives the next start_line).",
    "A range read lets you edit_file or sed the file afterwards; overwriting it with write_file needs a full read_file.",
  ].join(" "),
  schema,
  plan: (args, env) => planPath(args.path, env),
  async run(args, plan, env) {
    const start = args.start_line < 0 ? await fromEnd(plan.target, args.start_line, env) : args.start_line;
    return { result: await readRange(plan.target, start, args.end_line, env, args.anchors) };
  },
});
