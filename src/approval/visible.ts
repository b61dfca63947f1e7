// Approval text shows what is there: control characters, ANSI escape sequences and bidi controls in
// a diff (or a reason, or the arguments) would let new content hide or reorder the real lines on a
// person's terminal (`ESC[2K` and a carriage return erase a line; U+202E reverses one). Each is shown
// as a visible escape instead, in every approver (terminal prompt, `latch approvals`, MCP elicitation).
import { HIDING_CLASS, TAG, uEscape } from "../hiding.js";

// C0 controls but tab and newline, the hiding characters (src/hiding.ts) and the joiners U+200C/D;
// a carriage return only where it does not end a CRLF line (that one hides nothing).
const HIDDEN = new RegExp(`[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\u200c\\u200d${HIDING_CLASS}]|${TAG}|\\r(?!\\n)`, "g");

function escape(c: string): string {
  const code = c.charCodeAt(0);
  if (c === "\r") return "\\r";
  if (c === "\x1b") return "\\e";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : uEscape(c);
}

/** The text with every hidden character shown as an escape (`\e`, `\r`, `\x07`, `\u202e`). */
export function visibleText(text: string): string {
  HIDDEN.lastIndex = 0;
  return HIDDEN.test(text) ? text.replace(HIDDEN, escape) : text;
}

/**
 * A diff as the approver sees it. Unchanged when nothing in it is hidden; otherwise the hidden
 * characters are escaped as in visibleText and every backslash is doubled, so the shown form is
 * unambiguous (a lone CR and the two characters `\r` differ) and readDiff gives back the exact
 * diff: it still replays to the bytes written (an edit that splits a CRLF pair leaves a lone CR).
 */
export function visibleDiff(diff: string): { text: string; escaped: boolean } {
  if (!hasHidden(diff)) return { text: diff, escaped: false };
  HIDDEN.lastIndex = 0;
  return { text: diff.replace(/\\/g, "\\\\").replace(HIDDEN, escape), escaped: true };
}

/** The diff an escaped form (visibleDiff's, `escaped` true) stands for. */
export function readDiff(shown: string): string {
  return shown.replace(/\\(\\|r|e|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, e: string) => {
    if (e === "\\") return "\\";
    if (e === "r") return "\r";
    if (e === "e") return "\x1b";
    return String.fromCharCode(parseInt(e.slice(1), 16));
  });
}

/** Whether `visibleText` changes anything (the approver is then told so). */
export function hasHidden(text: string): boolean {
  HIDDEN.lastIndex = 0;
  return HIDDEN.test(text);
}

/** The arguments as a person sees them: JSON (which escapes C0 controls), with the rest made visible too. */
export function visibleArgs(args: unknown, max = Infinity): string {
  const json = JSON.stringify(args) ?? "null";
  return visibleText(json.length > max ? json.slice(0, max) + "…" : json);
}
