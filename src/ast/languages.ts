// The languages AST tools understand: napi's built-in grammars, plus grammars that npm packages ship
// prebuilt (no download, no compiler). napi and the grammars load on first use, so a latch process
// that never parses code does not pay for them; napi takes every dynamic grammar in one registration
// call, made then. A grammar that cannot load (no prebuild for this platform) is reported as such.
import { createRequire } from "node:module";
import type * as Napi from "@ast-grep/napi";
import { ToolError } from "../errors.js";

export type AstGrep = typeof Napi;
export type NapiLang = Parameters<AstGrep["parse"]>[0];

export interface Language {
  name: string;
  /** What napi calls it. */
  napi: string;
  extensions: string[];
  /** The character a metavariable's `$` stands for when the grammar parses a pattern (from the package). */
  expando: string;
  /** The npm package of a grammar registered at load (none: built into napi). */
  package?: string;
}

export const LANGUAGES: readonly Language[] = [
  { name: "typescript", napi: "TypeScript", extensions: ["ts", "mts", "cts"], expando: "$" },
  { name: "tsx", napi: "Tsx", extensions: ["tsx"], expando: "$" },
  { name: "javascript", napi: "JavaScript", extensions: ["js", "mjs", "cjs", "jsx"], expando: "$" },
  { name: "python", napi: "python", extensions: ["py", "pyi"], expando: "µ", package: "@ast-grep/lang-python" },
  { name: "go", napi: "go", extensions: ["go"], expando: "µ", package: "@ast-grep/lang-go" },
  { name: "rust", napi: "rust", extensions: ["rs"], expando: "µ", package: "@ast-grep/lang-rust" },
  { name: "java", napi: "java", extensions: ["java"], expando: "$", package: "@ast-grep/lang-java" },
  { name: "c", napi: "c", extensions: ["c", "h"], expando: "_", package: "@ast-grep/lang-c" },
  { name: "css", napi: "Css", extensions: ["css"], expando: "$" },
  { name: "html", napi: "Html", extensions: ["html", "htm"], expando: "$" },
];

const require = createRequire(import.meta.url);
let loaded: { napi: AstGrep; unavailable: Map<string, string> } | undefined;

/** napi, with every grammar that can load registered. */
export function astGrep(): AstGrep {
  if (!loaded) {
    const napi = require("@ast-grep/napi") as AstGrep;
    const unavailable = new Map<string, string>();
    const usable: Record<string, { libraryPath: string; extensions: string[] }> = {};
    for (const l of LANGUAGES) {
      if (!l.package) continue;
      try {
        const reg = require(l.package) as { libraryPath: string; extensions: string[] };
        void reg.libraryPath; // throws when the package has no prebuild for this platform
        usable[l.napi] = reg;
      } catch (err) {
        unavailable.set(l.name, (err as Error).message);
      }
    }
    if (Object.keys(usable).length > 0) napi.registerDynamicLanguage(usable);
    loaded = { napi, unavailable };
  }
  return loaded.napi;
}

/** Why a language's grammar did not load here, or undefined when it is usable. */
export function unavailable(lang: Language): string | undefined {
  astGrep();
  return loaded!.unavailable.get(lang.name);
}

/** The language's id for napi; an error that says so when its grammar did not load. */
export function grammarOf(lang: Language): NapiLang {
  const why = unavailable(lang);
  if (why)
    throw new ToolError(
      "EUNAVAILABLE",
      `The ${lang.name} grammar did not load on this machine (${why}), so AST tools cannot read ${lang.name} here. Use grep instead.`,
    );
  return lang.napi;
}

const byExtension = new Map<string, Language>();
for (const l of LANGUAGES) for (const e of l.extensions) byExtension.set(e, l);

/** The language of a file, by its extension; undefined for files AST tools do not read. */
export function languageOf(rel: string): Language | undefined {
  const base = rel.slice(rel.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? undefined : byExtension.get(base.slice(dot + 1).toLowerCase());
}

const ALIASES: Record<string, string> = {
  ts: "typescript",
  js: "javascript",
  jsx: "javascript",
  py: "python",
  golang: "go",
  rs: "rust",
};

/** The language a `lang` argument names (names, common short names, or an extension). */
export function languageNamed(input: string): Language {
  const key = input.trim().toLowerCase();
  const found = LANGUAGES.find((l) => l.name === (ALIASES[key] ?? key)) ?? byExtension.get(key);
  if (found) return found;
  throw new ToolError(
    "EINVAL",
    `Expected \`lang\` to be one of ${LANGUAGES.map((l) => l.name).join(", ")}, got \`${input}\`.`,
  );
}
