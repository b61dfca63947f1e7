// The languages AST tools understand: napi's built-in grammars, plus grammars that npm packages ship
// prebuilt (no download, no compiler). napi takes every dynamic grammar in one registration call, so
// they are registered here once, at load; one that cannot load (no prebuild for this platform) is
// left out and reported, rather than failing the whole host.
import { Lang, registerDynamicLanguage, type parse } from "@ast-grep/napi";
import go from "@ast-grep/lang-go";
import java from "@ast-grep/lang-java";
import python from "@ast-grep/lang-python";
import rust from "@ast-grep/lang-rust";
import { ToolError } from "../errors.js";

export type NapiLang = Parameters<typeof parse>[0];

export interface Language {
  name: string;
  /** What napi calls it. */
  napi: NapiLang;
  extensions: string[];
  /** The character a metavariable's `$` stands for when parsing a pattern ("$" where `$` is legal). */
  expando: string;
  /** Whether outline has rules for it. */
  outline: boolean;
}

const BUILT_IN: Language[] = [
  { name: "typescript", napi: Lang.TypeScript, extensions: ["ts", "mts", "cts"], expando: "$", outline: true },
  { name: "tsx", napi: Lang.Tsx, extensions: ["tsx"], expando: "$", outline: true },
  { name: "javascript", napi: Lang.JavaScript, extensions: ["js", "mjs", "cjs", "jsx"], expando: "$", outline: true },
  { name: "css", napi: Lang.Css, extensions: ["css"], expando: "$", outline: false },
  { name: "html", napi: Lang.Html, extensions: ["html", "htm"], expando: "$", outline: false },
];

const DYNAMIC = { python, go, rust, java } as const;
const DYNAMIC_EXTRA_EXTENSIONS: Record<string, string[]> = { python: ["pyi"] };

/** Grammars that could not be loaded on this machine, with why (for `latch tools` and errors). */
export const UNAVAILABLE: Record<string, string> = {};

function registerDynamic(): Language[] {
  const usable: Record<string, (typeof DYNAMIC)[keyof typeof DYNAMIC]> = {};
  for (const [name, reg] of Object.entries(DYNAMIC)) {
    try {
      void reg.libraryPath; // throws when the package has no prebuild for this platform
      usable[name] = reg;
    } catch (err) {
      UNAVAILABLE[name] = (err as Error).message;
    }
  }
  if (Object.keys(usable).length === 0) return [];
  registerDynamicLanguage(usable);
  return Object.entries(usable).map(([name, reg]) => ({
    name,
    napi: name as NapiLang,
    extensions: [...reg.extensions, ...(DYNAMIC_EXTRA_EXTENSIONS[name] ?? [])],
    expando: reg.expandoChar ?? "$",
    outline: true,
  }));
}

export const LANGUAGES: readonly Language[] = [...BUILT_IN, ...registerDynamic()];

const byExtension = new Map<string, Language>();
for (const l of LANGUAGES) for (const e of l.extensions) byExtension.set(e, l);

/** The language of a file, by its extension; undefined for files AST tools do not read. */
export function languageOf(rel: string): Language | undefined {
  const base = rel.slice(rel.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? undefined : byExtension.get(base.slice(dot + 1).toLowerCase());
}

const ALIASES: Record<string, string> = { ts: "typescript", js: "javascript", jsx: "javascript", py: "python", golang: "go", rs: "rust" };

/** The language a `lang` argument names (names, common short names, or an extension). */
export function languageNamed(input: string): Language {
  const key = input.trim().toLowerCase();
  const name = ALIASES[key] ?? key;
  const found = LANGUAGES.find((l) => l.name === name) ?? byExtension.get(key);
  if (found) return found;
  const why = UNAVAILABLE[name] ? ` (its grammar did not load here: ${UNAVAILABLE[name]})` : "";
  throw new ToolError("EINVAL", `Expected \`lang\` to be one of ${LANGUAGES.map((l) => l.name).join(", ")}, got \`${input}\`${why}.`);
}
