// Checks on the raw text of a line, before it is parsed: its size, and characters that must never
// reach the parser (it drops carriage returns silently) or a program name (invisible look-alikes).
import { HIDING_CLASS, TAG } from "../hiding.js";

export const MAX_LINE_BYTES = 1024 * 1024;
/** The parser's tree is slow to read word by word (about 0.3 ms each), so a line's words are capped. */
export const MAX_WORDS = 1024;
/** C0 controls but tab and newline, the hiding characters (src/hiding.ts), the joiners U+200C/D. */
const CONTROL = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\u200c\\u200d${HIDING_CLASS}]|${TAG}`);

/** The first control or invisible character, as "U+000D", or undefined. */
export function controlCharacter(text: string): string | undefined {
  const m = CONTROL.exec(text);
  return m ? `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}` : undefined;
}

/** Words split on blanks outside quotes, close to sh's split: it only bounds the parser's cost. */
export function countWords(line: string): number {
  let words = 0;
  let quote = "";
  let inWord = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = "";
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\n") {
      inWord = false;
      continue;
    }
    if (!inWord) words++;
    inWord = true;
    if (ch === "'" || ch === '"') quote = ch;
  }
  return words;
}
