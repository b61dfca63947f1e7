import { z } from "zod";
import { Refusal, ToolError } from "../errors.js";
import { findFiles } from "../browse/find.js";
import type { ResolvedPath } from "../fs/paths.js";
import { readLineWindow } from "../fs/read-lines.js";
import { humanSize } from "../fs/text.js";
import { defineTool, type Plan, type ToolEnv } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    paths: z
      .array(z.string())
      .min(1)
      .max(200)
      .optional()
      .describe("The files to read, relative to the workspace root."),
    glob: z
      .string()
      .min(1)
      .optional()
      .describe('Instead of paths: a find_files glob such as "src/**/*.ts" (gitignored and hidden files left out).'),
    path: z.string().optional().describe("With glob: the folder to search. Default: the whole workspace."),
    force: z.boolean().optional().describe("Return the text of files you already read unchanged in this session."),
  });

interface ManyPlan extends Plan {
  paths: ResolvedPath[];
  /** Files named in `paths` that could not even be resolved: one line each. */
  failed: string[];
  glob?: { start: ResolvedPath; pattern: string };
}

/** Each file's share is what is left of this; past it, files are listed as not shown. */
const BUDGET_FACTOR = 4;
const MIN_FILE_BYTES = 256;

export default defineTool({
  name: "read_many_files",
  aliases: ["read_files", "read_multiple_files"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Read several text files in one call, by a list of paths or a glob. Each file comes whole while the output budget lasts, then cut at a whole line with the line to continue from; files past the budget are listed in `not_shown`.",
    "A file that cannot be read (missing, binary, refused, too large) is one line in `unreadable`; the others are still read.",
    "A file shown whole counts as a full read (write_file may overwrite it); a cut one as a partial read. Files you already read unchanged come back as {unchanged: true} unless force.",
  ].join(" "),
  schema,
  resultBudget: (env) => env.settings.local_fs.maxOutputBytes * BUDGET_FACTOR,
  async plan(args, env): Promise<ManyPlan> {
    if ((args.paths === undefined) === (args.glob === undefined))
      throw new ToolError("EINVAL", "Pass either `paths` (a list of files) or `glob`, one of the two.");
    if (args.glob !== undefined) {
      const start = await env.resolve(args.path ?? ".");
      return { paths: [start], walks: [start], failed: [], glob: { start, pattern: args.glob } };
    }
    if (args.path !== undefined)
      throw new ToolError("EINVAL", "`path` goes with `glob`; with `paths`, list the files.");
    const paths: ResolvedPath[] = [];
    const failed: string[] = [];
    for (const p of args.paths!) {
      try {
        paths.push(await env.resolve(p));
      } catch (err) {
        if (!(err instanceof Refusal) && !(err instanceof ToolError)) throw err;
        failed.push(`${p}: ${err instanceof Refusal ? err.reason : err.message}`);
      }
    }
    return { paths, failed };
  },
  async run(args, plan, env) {
    const targets = plan.glob ? await globTargets(plan.glob, env) : { files: plan.paths, note: undefined, hidden: 0 };
    const budget = env.settings.local_fs.maxOutputBytes * BUDGET_FACTOR - 2048; // room for the JSON around the contents
    let left = budget;
    const files: Record<string, unknown>[] = [];
    const unreadable = [...plan.failed];
    const notShown: string[] = [];
    for (const t of targets.files) {
      if (env.signal.aborted) break;
      if (left < MIN_FILE_BYTES) {
        notShown.push(showName(t.rel));
        continue;
      }
      try {
        const shown = await readOne(t, left, args.force === true, env);
        left -= shown.spent;
        files.push(shown.entry);
      } catch (err) {
        if (!(err instanceof Refusal) && !(err instanceof ToolError)) throw err;
        unreadable.push(`${showName(t.rel)}: ${err instanceof Refusal ? err.reason : err.message}`);
      }
    }
    const result: Record<string, unknown> = { files };
    if (unreadable.length) result.unreadable = unreadable;
    if (notShown.length) {
      result.not_shown = notShown;
      result.note = `The output budget (${budget} bytes) was spent; read the files in not_shown with another call.`;
    }
    if (targets.note) result.glob_note = targets.note;
    if (targets.hidden > 0) result.hidden = targets.hidden;
    return { result };
  },
});

async function readOne(t: ResolvedPath, left: number, force: boolean, env: ToolEnv) {
  // Sized on the opened file, before a byte is read.
  const refuseSize = (size: number) =>
    size > env.settings.local_fs.maxReadBytes
      ? new Refusal(`${humanSize(size)}, over the read limit (_max_read_bytes); use read_file_range.`)
      : undefined;
  const w = await readLineWindow(t, { start: 1, maxOutputBytes: left, signal: env.signal, refuseSize });
  const whole = w.nextStartLine === undefined && w.cutLine === undefined;
  if (whole && !force && env.readSeen(t.abs, w.sha256) === "full")
    return { spent: 100, entry: { path: showName(t.rel), sha256: w.sha256, unchanged: true } };
  // Only a file shown whole counts as a full read.
  env.recordRead(t.abs, w.sha256, whole ? "full" : "range");
  const entry: Record<string, unknown> = { path: showName(t.rel), content: w.content, total_lines: w.totalLines };
  if (!whole) entry.next_start_line = w.nextStartLine;
  return { spent: Buffer.byteLength(w.content) + 100, entry };
}

async function globTargets(g: { start: ResolvedPath; pattern: string }, env: ToolEnv) {
  const found = await findFiles({
    root: env.root,
    start: g.start,
    pattern: g.pattern,
    max: env.settings.local_fs.maxFindResults,
    visibility: env.visibility,
    resolve: (rel) => env.resolve(rel),
    signal: env.signal,
    onProgress: () => undefined,
  });
  const files: ResolvedPath[] = [];
  for (const rel of found.matches) {
    try {
      files.push(await env.resolve(showName(rel))); // a found name, asked for as latch shows it
    } catch (err) {
      if (!(err instanceof Refusal) && !(err instanceof ToolError)) throw err; // a refused entry is left out
    }
  }
  const note = found.truncated
    ? `The glob matched ${found.count} files; the first ${found.matches.length} (_max_find_results) were read.`
    : undefined;
  return { files, note, hidden: found.hidden };
}
