// Structural search over a file or a folder: ast-grep patterns with metavariables, files walked in
// sorted order, a few parsed at a time on libuv's pool, within the call's budget and match cap. The
// cap is applied in path order, so the same tree always gives the same first matches.
import type { SgNode } from "@ast-grep/napi";
import { ToolError } from "../errors.js";
import type { Visibility } from "../policy/visibility.js";
import type { ResolvedPath } from "../fs/paths.js";
import type { Budget } from "./budget.js";
import { astGrep, grammarOf, languageOf, unavailable, type Language } from "./languages.js";
import { readSource } from "./source.js";
import { walkSources } from "./walk.js";
import { showName } from "../fs/names.js";

export interface SearchRequest {
  pattern: string;
  /** The `lang` argument; without it each file's extension decides. */
  language?: Language;
  root: string;
  target: { abs: string; rel: string; isFile: boolean };
  resolve: (rel: string) => Promise<ResolvedPath>;
  /** The one visibility rule (src/policy/visibility.ts). */
  visibility: Pick<Visibility, "hides">;
  maxMatches: number;
  maxReadBytes: number;
  budget: Budget;
  /** With a rewrite template, each file's rewritten text is computed too (nothing is written). */
  rewrite?: string;
}

interface Match {
  rel: string;
  line: number;
  text: string;
  vars: Record<string, string>;
}

interface FileRewrite {
  rel: string;
  before: string;
  after: string;
  replacements: number;
}

export interface SearchOutcome {
  matches: Match[];
  rewrites: FileRewrite[];
  /** More matches existed than the cap. */
  capped: boolean;
  filesSearched: number;
  /** Files found by the walk; a lower bound when the walk itself was stopped. */
  filesFound: number;
  walkComplete: boolean;
  skipped: Record<string, number>;
  /** The first file not searched, when the budget stopped the search. */
  stoppedBefore?: string;
  /** Languages whose grammar refused the pattern outright. */
  invalidIn: Record<string, string>;
  /** The languages of the files found. */
  languages: Language[];
  /** Entries the visibility rule left out (a hidden folder counts once). */
  hidden: number;
}

const CONCURRENCY = 4;
const MAX_TEXT = 200;

/** Metavariable names in a pattern: `$A` single, `$$$ARGS` multiple; `$_…` captures nothing. */
function metavariables(pattern: string): { name: string; multi: boolean }[] {
  const seen = new Map<string, boolean>();
  for (const m of pattern.matchAll(/(\$\$\$)?\$?([A-Z_][A-Z0-9_]*)/g)) {
    if (!m[0].startsWith("$") || m[2].startsWith("_")) continue;
    if (!seen.has(m[2])) seen.set(m[2], m[1] !== undefined);
  }
  return [...seen].map(([name, multi]) => ({ name, multi }));
}

export async function searchTree(req: SearchRequest): Promise<SearchOutcome> {
  const out: SearchOutcome = {
    matches: [],
    rewrites: [],
    capped: false,
    filesSearched: 0,
    filesFound: 0,
    walkComplete: true,
    skipped: {},
    invalidIn: {},
    languages: [],
    hidden: 0,
  };
  if (req.language) grammarOf(req.language); // a named language that cannot load is an error
  let singleFile: Language | undefined;
  if (req.target.isFile) {
    singleFile = req.language ?? languageOf(req.target.rel);
    if (!singleFile)
      throw new ToolError(
        "EINVAL",
        `The language of \`${showName(req.target.rel)}\` is not known from its name. Pass lang, such as "typescript".`,
      );
    grammarOf(singleFile);
  }
  const vars = metavariables(req.pattern);
  const valid = new Map<Language, boolean>();
  const usable = (lang: Language) => {
    if (!valid.has(lang)) {
      try {
        astGrep().parse(grammarOf(lang), "").root().findAll(req.pattern);
        valid.set(lang, true);
      } catch (err) {
        out.invalidIn[lang.name] = (err as Error).message;
        valid.set(lang, false);
      }
    }
    return valid.get(lang)!;
  };

  // The walk feeds the workers as it goes, so parsing starts with the first file. Results are kept
  // by file index; no new file is taken once the files finished in path order hold more than the
  // cap, so the kept matches never depend on which parse finished first.
  const files: { abs: string; rel: string; lang: Language }[] = [];
  const results: (Match[] | undefined)[] = [];
  const rewrites: (FileRewrite | undefined)[] = [];
  let next = 0;
  let doneInOrder = 0;
  let matchesInOrder = 0;
  let walkDone = false;
  let failed = false;
  let waiting: (() => void)[] = [];
  const wake = () => {
    const w = waiting;
    waiting = [];
    for (const f of w) f();
  };
  const enough = () => matchesInOrder > req.maxMatches || failed;

  const produce = async () => {
    try {
      if (singleFile) {
        files.push({ ...req.target, lang: singleFile });
        return;
      }
      const want = (rel: string) => {
        const l = languageOf(rel);
        return l !== undefined && (req.language === undefined || l === req.language);
      };
      const walk = {
        root: req.root,
        start: req.target,
        visibility: req.visibility,
        counts: walkCounts,
        resolve: req.resolve,
        wanted: want,
        budget: req.budget,
      };
      for await (const f of walkSources(walk)) {
        const lang = languageOf(f.rel)!;
        if (unavailable(lang) !== undefined) out.skipped["no grammar here"] = (out.skipped["no grammar here"] ?? 0) + 1;
        else files.push({ ...f, lang });
        wake();
        if (enough()) {
          out.walkComplete = false;
          return;
        }
      }
      out.walkComplete = !req.budget.spent();
    } finally {
      walkDone = true;
      wake();
    }
  };
  const searchOne = async (i: number): Promise<Match[]> => {
    const f = files[i];
    if (!usable(f.lang)) return [];
    const src = await readSource(f, req.maxReadBytes, true);
    out.filesSearched++;
    if ("leftOut" in src) {
      out.skipped[src.leftOut] = (out.skipped[src.leftOut] ?? 0) + 1;
      return [];
    }
    const nodes = (await astGrep().parseAsync(grammarOf(f.lang), src.text)).root().findAll(req.pattern);
    if (req.rewrite !== undefined && nodes.length) rewrites[i] = rewriteFile(f.rel, src.text, nodes, req.rewrite, vars);
    return nodes.map((n) => toMatch(f.rel, n, src.text, vars));
  };
  const work = async () => {
    while (!enough()) {
      if (next >= files.length) {
        if (walkDone) return;
        await new Promise<void>((resolve) => waiting.push(resolve));
        continue;
      }
      if (req.budget.spent()) {
        out.stoppedBefore ??= showName(files[next].rel);
        return;
      }
      const i = next++;
      results[i] = await searchOne(i);
      while (doneInOrder < next && results[doneInOrder] !== undefined) matchesInOrder += results[doneInOrder++]!.length;
    }
  };
  const worker = () =>
    work().catch((err) => {
      failed = true; // stops the walk and the other workers
      throw err;
    });
  const walkCounts = { seen: 0, ignored: 0, hidden: 0 };
  const producing = produce();
  await Promise.all([...Array.from({ length: CONCURRENCY }, worker), producing]);

  out.filesFound = files.length;
  out.hidden = walkCounts.hidden;
  out.languages = [...new Set(files.map((f) => f.lang))];
  const checked = [...valid.values()];
  if (checked.length > 0 && checked.every((ok) => !ok)) throw invalidPattern(req.pattern, out.invalidIn);
  const all = results.flatMap((m) => m ?? []);
  out.capped = all.length > req.maxMatches;
  out.matches = all.slice(0, req.maxMatches);
  out.rewrites = rewrites.filter((r): r is FileRewrite => r !== undefined);
  return out;
}

function invalidPattern(pattern: string, invalidIn: Record<string, string>): ToolError {
  const [lang, why] = Object.entries(invalidIn)[0];
  return new ToolError(
    "EINVAL",
    `Expected \`pattern\` to be a valid ast-grep pattern for ${lang}, got \`${pattern}\`: ${why}. Write it as code of that language, with $NAME or $$$NAME for the parts that vary.`,
  );
}

function toMatch(rel: string, n: SgNode, source: string, vars: { name: string; multi: boolean }[]): Match {
  const r = n.range();
  const text = n.text().split("\n")[0];
  const captured: Record<string, string> = {};
  for (const v of vars) {
    const value = capture(n, v, source);
    if (value !== undefined) captured[v.name] = clip(value);
  }
  return {
    rel,
    line: r.start.line + 1,
    text: clip(text.trim() === "" ? n.text().trim() : text) + (n.text().includes("\n") ? " …" : ""),
    vars: captured,
  };
}

function capture(n: SgNode, v: { name: string; multi: boolean }, source: string): string | undefined {
  if (!v.multi) return n.getMatch(v.name)?.text();
  const nodes = n.getMultipleMatches(v.name);
  if (nodes.length === 0) return "";
  return source.slice(nodes[0].range().start.index, nodes[nodes.length - 1].range().end.index);
}

function clip(s: string): string {
  return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT - 1) + "…" : s;
}

/**
 * Each match replaced by the template with its captures filled in; the template's own line breaks
 * take the matched line's indentation. Matches inside an earlier (outer) match are left to it.
 */
function rewriteFile(
  rel: string,
  source: string,
  nodes: SgNode[],
  template: string,
  vars: { name: string; multi: boolean }[],
): FileRewrite {
  const spans = nodes
    .map((n) => ({ n, start: n.range().start.index, end: n.range().end.index }))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  let after = "";
  let at = 0;
  let replacements = 0;
  for (const s of spans) {
    if (s.start < at) continue; // nested in a match already replaced
    const lineStart = source.lastIndexOf("\n", s.start - 1) + 1;
    const indent = /^[ \t]*/.exec(source.slice(lineStart, s.start))![0];
    const values = new Map(vars.map((v) => [v.name, capture(s.n, v, source) ?? ""]));
    const filled = template
      .split("\n")
      .join("\n" + indent)
      .replace(
        /\$\$\$([A-Z_][A-Z0-9_]*)|\$([A-Z_][A-Z0-9_]*)/g,
        (whole, multi: string | undefined, single: string | undefined) => values.get((multi ?? single)!) ?? whole,
      );
    after += source.slice(at, s.start) + filled;
    at = s.end;
    replacements++;
  }
  after += source.slice(at);
  return { rel, before: source, after, replacements };
}
