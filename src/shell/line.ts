// Checks on the raw text of a line, before it is parsed: its size, and characters that must never
// reach the parser (it drops carriage returns silently) or a program name (invisible look-alikes).

export const MAX_LINE_BYTES = 1024 * 1024;
/** The parser's tree is slow to read word by word (about 0.3 ms each), so a line's words are capped. */
export const MAX_WORDS = 1024;
/**
 * C0/C1 controls (but tab and newline), DEL, and invisible or direction-changing characters: the same
 * set approval text escapes (src/approval/visible.ts), tag characters U+E0000..U+E007F included.
 */
const CONTROL =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;

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
