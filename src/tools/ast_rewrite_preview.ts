import { createTwoFilesPatch } from "diff";
import { z } from "zod";
import { LANGUAGES } from "../ast/languages.js";
import { planAstTarget, searchAstTarget } from "./ast-target.js";
import { fitting, joinNotes, patternNote, skippedNote, stopNote } from "../ast/report.js";
import { defineTool } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    pattern: z.string().min(1).describe("An ast-grep pattern, as for ast_search, e.g. `console.log($A)`."),
    rewrite: z
      .string()
      .describe(
        "What each match becomes; $NAME and $$$NAME are replaced by what the pattern captured, e.g. `logger.info($A)`.",
      ),
    lang: z
      .string()
      .optional()
      .describe(`Only files of this language (${LANGUAGES.map((l) => l.name).join(", ")}). Default: by extension.`),
    path: z.string().describe("File or folder to rewrite, relative to the workspace root."),
  });

export default defineTool({
  name: "ast_rewrite_preview",
  aliases: [],
  toolset: "ast",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Show, as a unified diff, what a structural rewrite would change: every match of an ast-grep pattern replaced by a template with its metavariables filled in.",
    "It writes nothing. Apply the change you want with hash_edit, edit_file or write_file after reading the files.",
  ].join(" "),
  schema,
  plan: (args, env) => planAstTarget(args, env),
  async run(args, plan, env) {
    const { o, budget } = await searchAstTarget(plan, env, args.pattern, args.rewrite);
    const changed = o.rewrites.filter((r) => r.after !== r.before);
    const diffs = changed.map((r) =>
      createTwoFilesPatch(`a/${showName(r.rel)}`, `b/${showName(r.rel)}`, r.before, r.after, undefined, undefined, {
        context: 3,
      }).replace(/^=+\n/, ""),
    );
    const kept = fitting(diffs, env.settings.local_fs.maxOutputBytes);
    const note = joinNotes(
      "Nothing was written.",
      stopNote(budget, o),
      o.capped
        ? `Matches were capped at ${o.matches.length} (_max_grep_matches): files after the cap are not in the diff. Narrow path.`
        : undefined,
      kept < diffs.length
        ? `Output limit reached: the diff shows ${kept} of ${diffs.length} files; not shown: ${changed
            .slice(kept)
            .map((r) => showName(r.rel))
            .slice(0, 20)
            .join(", ")}.`
        : undefined,
      skippedNote(o),
      o.matches.length === 0 && o.filesSearched > 0 ? patternNote(args.pattern, o.languages, o.invalidIn) : undefined,
    );
    const result: Record<string, unknown> = {
      path: showName(plan.target.rel),
      files_changed: changed.length,
      replacements: changed.reduce((n, r) => n + r.replacements, 0),
      diff: diffs.slice(0, kept).join(""),
    };
    if (o.hidden > 0) result.hidden = o.hidden;
    if (budget.reason()) result.stopped = budget.reason();
    if (note) result.note = note;
    return { result, display: { diff: diffs.join("") } };
  },
});
