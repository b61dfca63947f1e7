// From a parsed word to the one literal string it stands for, or the construct that makes it more
// than a literal. Only plain text and quotes are understood; everything else is named and refused.
import type { ShPart, ShWord } from "./parse.js";

export type WordValue = { ok: true; value: string } | { ok: false; construct: string };

const GLOB = /[*?[]/;
const TILDE = /(^|[=:])~/;
/** A brace pair that bash would expand: a comma or `..` between `{` and `}`. */
const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;

/** The literal value of a word, or the first construct in it that latch does not run. */
export function literalWord(word: ShWord): WordValue {
  let value = "";
  let unquoted = ""; // the unquoted text, with quoted runs replaced by a neutral character
  for (const [i, part] of word.parts.entries()) {
    const r = literalPart(part, false);
    if (!r.ok) return r;
    if (part.type === "lit") {
      if (i === 0 && part.value.startsWith("="))
        return { ok: false, construct: "a leading `=` (zsh expands it to a program path)" };
      if (GLOB.test(part.value)) return { ok: false, construct: "an unquoted glob (`*`, `?` or `[`)" };
      unquoted += part.value;
    } else {
      unquoted += "_";
    }
    value += r.value;
  }
  // bash expands ~ at the start of a word and after = or : in assignment-like words (x=~/a, a:~/b).
  if (TILDE.test(unquoted)) return { ok: false, construct: "a `~` home-folder expansion" };
  if (BRACE_EXPANSION.test(unquoted)) return { ok: false, construct: "a brace expansion (`{a,b}` or `{1..3}`)" };
  return { ok: true, value };
}

function literalPart(part: ShPart, inDouble: boolean): WordValue {
  switch (part.type) {
    case "lit": {
      if (part.value.includes("\\")) return { ok: false, construct: "a backslash escape" };
      if (part.value.includes("$")) return { ok: false, construct: "a `$` expansion (`$VAR`, `$'…'` or `$\"…\"`)" };
      if (part.value.includes("`")) return { ok: false, construct: "a backtick command substitution" };
      return { ok: true, value: part.value };
    }
    case "sgl":
      if (part.dollar) return { ok: false, construct: "a `$'…'` escape string" };
      return { ok: true, value: part.value };
    case "dbl": {
      if (part.dollar) return { ok: false, construct: 'a `$"…"` locale string' };
      if (inDouble) return { ok: false, construct: "nested double quotes" };
      let value = "";
      for (const inner of part.parts) {
        const r = literalPart(inner, true);
        if (!r.ok) return r;
        value += r.value;
      }
      return { ok: true, value };
    }
    case "expansion":
      return { ok: false, construct: part.construct };
  }
}
