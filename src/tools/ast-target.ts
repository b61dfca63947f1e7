// What ast_search and ast_rewrite_preview share: the plan (a file or folder, and the language asked
// for) and one search of it under the toolset's deadline, the visibility rule and the caps.
import { requireFileOrFolder, statTarget } from "../browse/target.js";
import type { ResolvedPath } from "../fs/paths.js";
import { planPath, type Plan, type ToolEnv } from "./define.js";
import { startBudget, type Budget } from "../ast/budget.js";
import { languageNamed, type Language } from "../ast/languages.js";
import { searchTree, type SearchOutcome } from "../ast/search.js";

export interface AstPlan extends Plan {
  paths: ResolvedPath[];
  target: ResolvedPath;
  isFile: boolean;
  language?: Language;
}

export async function planAstTarget(args: { path: string; lang?: string }, env: ToolEnv): Promise<AstPlan> {
  const { paths, target } = await planPath(args.path, env);
  const language = args.lang === undefined ? undefined : languageNamed(args.lang);
  const st = await statTarget(target);
  requireFileOrFolder(st, target);
  const isFile = st.isFile();
  return { paths, target, isFile, language, walks: isFile ? [] : [target] };
}

/** Search the planned target; with `rewrite`, each match's rewritten file comes back too. */
export async function searchAstTarget(
  plan: AstPlan,
  env: ToolEnv,
  pattern: string,
  rewrite?: string,
): Promise<{ o: SearchOutcome; budget: Budget }> {
  const budget = startBudget(env.settings.ast.deadlineMs, env.signal);
  const o = await searchTree({
    pattern,
    rewrite,
    language: plan.language,
    root: env.root,
    target: { abs: plan.target.abs, rel: plan.target.rel, isFile: plan.isFile },
    resolve: (rel) => env.resolve(rel),
    visibility: env.visibility,
    maxMatches: env.settings.local_fs.maxGrepMatches,
    maxReadBytes: env.settings.local_fs.maxReadBytes,
    budget,
  });
  return { o, budget };
}
