import { z } from "zod";
import { ToolError } from "../errors.js";
import { startBudget } from "../ast/budget.js";
import { astGrep, grammarOf, languageNamed, languageOf, LANGUAGES } from "../ast/languages.js";
import { hasOutline, outlineOf, renderOutline } from "../ast/outline.js";
import { fitting } from "../ast/report.js";
import { readSource, refuseSource } from "../ast/source.js";
import { defineTool, planPath } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    path: z.string().describe("Source file, relative to the workspace root."),
    lang: z
      .string()
      .optional()
      .describe(
        "The language, when the file name does not tell it (typescript, tsx, javascript, python, go, rust, java, c).",
      ),
  });

export default defineTool({
  name: "outline",
  aliases: ["symbols"],
  toolset: "ast",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "List the declarations of a source file — classes, functions, methods, types, top-level variables — each as `START-END kind name: signature`, indented by nesting.",
    "Use it to find where something is before reading: then read just those lines with read_file_range. Much cheaper than reading a large file whole.",
    `Languages: ${LANGUAGES.filter((l) => hasOutline(l.name))
      .map((l) => l.name)
      .join(", ")}.`,
  ].join(" "),
  schema,
  async plan(args, env) {
    const { paths, target } = await planPath(args.path, env);
    const language = args.lang !== undefined ? languageNamed(args.lang) : languageOf(target.rel);
    if (!language)
      throw new ToolError(
        "EINVAL",
        `The language of \`${showName(target.rel)}\` is not known from its name. Pass lang, such as "typescript".`,
      );
    if (!hasOutline(language.name)) {
      throw new ToolError(
        "EINVAL",
        `outline has no declaration rules for ${language.name}; it reads ${LANGUAGES.filter((l) => hasOutline(l.name))
          .map((l) => l.name)
          .join(", ")}. Use ast_search or grep for ${language.name}.`,
      );
    }
    return { paths, target, language };
  },
  async run(_args, plan, env) {
    const { target, language } = plan;
    const src = await readSource(target, env.settings.local_fs.maxReadBytes);
    if ("leftOut" in src) throw refuseSource(target, src);
    const budget = startBudget(env.settings.ast.deadlineMs, env.signal);
    const root = (await astGrep().parseAsync(grammarOf(language), src.text)).root();
    const o = outlineOf(root, src.text, language.name, budget);
    const lines = renderOutline(o.entries);
    const kept = fitting(lines, env.settings.local_fs.maxOutputBytes);
    const notes: string[] = [];
    if (o.stoppedAtLine !== undefined) {
      notes.push(
        `Stopped by the time budget (tools_policies.ast._ast_deadline = ${budget.ms} ms) at line ${o.stoppedAtLine}: declarations after it are missing.`,
      );
    }
    if (kept < lines.length) {
      const next = o.entries[kept];
      notes.push(
        `Output limit reached: showing ${kept} of ${lines.length} declarations. The rest start at line ${next.start_line}; outline a smaller file, or read_file_range from there.`,
      );
    }
    const result: Record<string, unknown> = {
      path: showName(target.rel),
      language: language.name,
      total_lines: src.text.length === 0 ? 0 : src.text.split("\n").length - (src.text.endsWith("\n") ? 1 : 0),
      declarations: o.entries.length,
      outline: lines.slice(0, kept).join("\n"),
    };
    if (notes.length) result.note = notes.join(" ");
    return { result };
  },
});
