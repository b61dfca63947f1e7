import { z } from "zod";
import { ToolError, expected } from "../errors.js";
import { grepTree } from "../browse/grep.js";
import { requireFileOrFolder, statTarget } from "../browse/target.js";
import { defineTool, planPath } from "./define.js";
import { shapeGrep } from "./grep-modes.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    pattern: z
      .string()
      .min(1)
      .describe(
        "What to look for: a literal string, or a regular expression when regex is true. Matches within one line unless multiline is true.",
      ),
    path: z
      .string()
      .default(".")
      .describe("File or folder to search, relative to the workspace root. Default: the whole workspace."),
    regex: z
      .boolean()
      .default(false)
      .describe("Treat pattern as a regular expression (Rust/ripgrep syntax). Default: literal."),
    case_sensitive: z.boolean().default(true).describe("Match case exactly. Default true."),
    include: z
      .string()
      .optional()
      .describe(
        'Only search files matching this glob, such as "*.ts" (base name) or "src/**/*.test.ts" (path under `path`).',
      ),
    context: z.number().int().min(0).max(10).default(0).describe("Lines of context to show around each match (0-10)."),
    start_line: z.number().int().min(1).optional().describe("When path is one file: first line to search."),
    end_line: z.number().int().min(1).optional().describe("When path is one file: last line to search (inclusive)."),
    output: z
      .enum(["content", "files_with_matches", "count"])
      .default("content")
      .describe("content: the matching lines (default); files_with_matches: only the paths; count: matches per file."),
    multiline: z
      .boolean()
      .default(false)
      .describe(
        'Let a match cross lines (ripgrep\'s -U): `\\n` (or a newline in a literal pattern) matches a line break, and so do `\\s` and `[^x]`. `.` still stops at a line break (no --multiline-dotall, so `.*` never runs past the end of a line); write `[\\s\\S]*?` to span lines. `^` and `$` match at line starts and ends. Lines end in "\\n"; a CRLF file needs `\\r?\\n`. A match is shown as all its lines, numbered, and counts once. Default false.',
      ),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Skip this many matching lines (content) or files (the other modes): page past a capped result."),
  });

export default defineTool({
  name: "grep",
  aliases: ["search"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Search file contents, like ripgrep: literal by default, regex: true for a regular expression; multiline: true lets a match cross lines (`.` still stops at a line break).",
    "Skips gitignored files, .git, node_modules and binary files. Output is `path:N: text` per matching line (`N: text` for one file), sorted by path.",
    "Results are capped; the note says how many more matched and how to narrow the search. Prefer this over grep in the shell Entries the policy closes (credentials, denied paths) are left out unnamed and unsearched; `hidden` counts them.",
  ].join(" "),
  schema,
  async plan(args, env) {
    if (args.pattern.includes("\n") && !args.multiline) {
      throw new ToolError(
        "EINVAL",
        expected(
          "pattern",
          "a single line (grep matches within one line; pass multiline: true to match across lines)",
          args.pattern,
        ),
      );
    }
    const { paths, target } = await planPath(args.path, env);
    const st = await statTarget(target);
    requireFileOrFolder(st, target);
    const isFile = !st.isDirectory();
    if (!isFile && (args.start_line !== undefined || args.end_line !== undefined)) {
      throw new ToolError(
        "EINVAL",
        `start_line and end_line apply when path is one file, and \`${showName(target.rel)}\` is a folder. Drop them, or pass a file as path.`,
      );
    }
    if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) {
      throw new ToolError("EINVAL", expected("end_line", `at least start_line (${args.start_line})`, args.end_line));
    }
    return { paths, target, isFile, walks: isFile ? [] : [target] };
  },
  async run(args, plan, env) {
    const answer = await grepTree({
      root: env.root,
      target: { abs: plan.target.abs, rel: plan.target.rel, isFile: plan.isFile },
      query: {
        pattern: args.pattern,
        regex: args.regex,
        caseSensitive: args.case_sensitive,
        include: args.include,
        context: args.context,
        startLine: args.start_line,
        endLine: args.end_line,
        multiline: args.multiline,
      },
      // The other modes show no lines, so they may count further; offset pages in path order.
      maxMatches:
        (args.output === "content" ? env.settings.local_fs.maxGrepMatches : env.settings.local_fs.maxGrepMatches * 10) +
        args.offset,
      // Pages must agree: whenever the cap is reached, the kept matches are the first ones in path order.
      pathOrder: true,
      maxOutputBytes: env.settings.local_fs.maxOutputBytes,
      visibility: env.visibility,
      resolve: (rel) => env.resolve(rel),
      signal: env.signal,
      progress: (p) => env.progress(p),
      engineChoice: env.startupEnv.LATCH_GREP_ENGINE,
      index: env.folderIndex,
    });
    const result = shapeGrep(answer.result, answer.files, args.output, args.offset, {
      oneFile: plan.isFile,
      context: args.context,
      maxBytes: Math.max(1024, env.settings.local_fs.maxOutputBytes - 1024),
    });
    return { result, display: { engine: answer.engine } };
  },
});
