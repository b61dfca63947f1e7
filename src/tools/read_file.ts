import { z } from "zod";
import { Refusal } from "../errors.js";
import { readLineWindow } from "../fs/read-lines.js";
import { humanSize } from "../fs/text.js";
import { defineTool, planPath } from "./define.js";
import { readRange } from "./read_file_range.js";
import { lstatBeneath } from "../fs/beneath.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root."),
    start_line: z.number().int().min(1).optional().describe("Read from this line (1-based); same as read_file_range."),
    end_line: z.number().int().min(1).optional().describe("Read up to this line (inclusive); same as read_file_range."),
    force: z
      .boolean()
      .optional()
      .describe("Return the text even if you already read this exact content in this session."),
    anchors: z
      .boolean()
      .optional()
      .describe("Show each line as `N#ID|text`, the anchors hash_edit takes (always returns the text)."),
  });

export default defineTool({
  name: "read_file",
  aliases: ["read", "view"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client"],
  clientNeeds: ["read"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Read a whole text file. Prefer this over cat or head in the shell: only this read lets you edit the file afterwards.",
    "If you already read the same content in this session, you get {unchanged: true} instead of the text again (pass force to get it anyway).",
    "Large output is cut at whole lines, with the start_line to continue from; files over the read limit must be read with read_file_range.",
    "Folders and binary files are refused.",
  ].join(" "),
  schema,
  plan: (args, env) => planPath(args.path, env),
  async run(args, plan, env) {
    const { target } = plan;
    if (args.start_line !== undefined || args.end_line !== undefined) {
      return { result: await readRange(target, args.start_line ?? 1, args.end_line, env, args.anchors) };
    }
    // Sized on the opened file, before a byte is read; a client's buffer has no size to check first.
    const refuseSize = (size: number) =>
      size > env.settings.local_fs.maxReadBytes
        ? new Refusal(
            `\`${showName(target.rel)}\` is ${humanSize(size)}, over the read limit of ${humanSize(env.settings.local_fs.maxReadBytes)} (_max_read_bytes).`,
            `Read it in parts with read_file_range {"path": "${showName(target.rel)}", "start_line": 1}, or find what you need with grep.`,
          )
        : undefined;
    if (args.anchors && env.files.kind === "local") {
      const st = lstatBeneath(target);
      if (st?.isFile()) {
        const refusal = refuseSize(st.size);
        if (refusal) throw refusal;
      }
    }
    if (args.anchors) return { result: await readRange(target, 1, undefined, env, true) };
    const w = await readLineWindow(
      target,
      { start: 1, maxOutputBytes: env.settings.local_fs.maxOutputBytes, signal: env.signal, refuseSize },
      env.files,
    );
    const whole = w.nextStartLine === undefined && w.cutLine === undefined;
    if (whole && !args.force && env.readSeen(target.abs, w.sha256) === "full") {
      return {
        result: {
          path: showName(target.rel),
          sha256: w.sha256,
          bytes: w.bytes,
          unchanged: true,
          note: "You already read this exact content in this session; pass force: true to get the text again.",
        },
      };
    }
    env.recordRead(target.abs, w.sha256, whole ? "full" : "range");
    const result: Record<string, unknown> = {
      path: showName(target.rel),
      content: w.content,
      total_lines: w.totalLines,
      bytes: w.bytes,
      sha256: w.sha256,
    };
    if (!whole) {
      result.next_start_line = w.nextStartLine;
      result.note = `Output limit (${env.settings.local_fs.maxOutputBytes} bytes) reached: showing lines 1-${w.endLine} of ${w.totalLines}. Continue with read_file_range start_line ${w.nextStartLine}. This counts as a partial read: edits are allowed, a whole-file overwrite is not.`;
    }
    return { result };
  },
});
