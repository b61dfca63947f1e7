import { z } from "zod";
import { LANGUAGES } from "../ast/languages.js";
import { planAstTarget, searchAstTarget } from "./ast-target.js";
import { fitting, joinNotes, patternNote, skippedNote, stopNote } from "../ast/report.js";
import { defineTool } from "./define.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    pattern: z
      .string()
      .min(1)
      .describe(
        "An ast-grep pattern: code of the language, with $NAME for one node and $$$NAME for any number, e.g. `console.log($A)` or `function $F($$$ARGS) { $$$BODY }`.",
      ),
    lang: z
      .string()
      .optional()
      .describe(
        `Only files of this language (${LANGUAGES.map((l) => l.name).join(", ")}). Default: every supported file, by extension.`,
      ),
    path: z
      .string()
      .default(".")
      .describe("File or folder to search, relative to the workspace root. Default: the whole workspace."),
  });

export default defineTool({
  name: "ast_search",
  aliases: ["sg"],
  toolset: "ast",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Search code by structure, not text: an ast-grep pattern matches syntax trees, so formatting, line breaks and comments do not matter.",
    "Each match comes back as `path:N: text` with the metavariables it captured ($A → its text).",
    "Skips gitignored files, .git and node_modules; results are capped, and a search that runs out of time stops and says how far it got. Entries the policy closes (credentials, denied paths) are left out unnamed and unsearched; `hidden` counts them.",
  ].join(" "),
  schema,
  plan: (args, env) => planAstTarget(args, env),
  async run(args, plan, env) {
    const { o, budget } = await searchAstTarget(plan, env, args.pattern);
    const matches = o.matches.map((m) => ({
      match: `${showName(m.rel)}:${m.line}: ${m.text}`,
      ...(Object.keys(m.vars).length ? { vars: m.vars } : {}),
    }));
    const kept = fitting(matches, env.settings.local_fs.maxOutputBytes);
    const note = joinNotes(
      stopNote(budget, o),
      o.capped
        ? `Showing the first ${o.matches.length} matches in path order (_max_grep_matches); narrow path or lang, or make the pattern more specific.`
        : undefined,
      kept < matches.length
        ? `Output limit reached: showing ${kept} of ${matches.length} matches; the next is ${matches[kept].match.split(": ")[0]}. Narrow path to see the rest.`
        : undefined,
      skippedNote(o),
      o.matches.length === 0 && o.filesSearched > 0 ? patternNote(args.pattern, o.languages, o.invalidIn) : undefined,
      o.filesFound === 0
        ? `No ${plan.language?.name ?? "supported source"} files under \`${showName(plan.target.rel)}\`.`
        : undefined,
    );
    const result: Record<string, unknown> = {
      pattern: args.pattern,
      path: showName(plan.target.rel),
      count: o.matches.length,
      files_searched: o.filesSearched,
      matches: matches.slice(0, kept),
    };
    if (o.hidden > 0) result.hidden = o.hidden;
    if (budget.reason()) result.stopped = budget.reason();
    if (note) result.note = note;
    return { result };
  },
});
