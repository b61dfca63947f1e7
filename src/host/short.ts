// Error and refusal messages quote what the caller sent (a path, a pattern, a value). A quoted input
// is cut to its ends here, so a message's size never grows with its input: a 6 MiB path quoted twice
// was a 12 MB reply, over an MCP client's 10 MiB limit.
import type { CallResult } from "./types.js";

/** A run of non-space characters longer than this is cut to its ends. */
const LONG_RUN = 300;
/** No message is longer than this after cutting (a message of many short words). */
const MAX_MESSAGE = 8192;

/** The text with each run of non-space characters over LONG_RUN cut to its ends, and the whole capped. */
export function cutLongInputs(s: string): string {
  if (s.length <= LONG_RUN) return s;
  // A scan, not a RegExp: a backtracking engine overflows its stack on a run of millions.
  const parts: string[] = [];
  let start = 0;
  let runStart = 0;
  for (let i = 0; i <= s.length; i++) {
    if (i < s.length && s.charCodeAt(i) > 0x20) continue; // a run ends at a space or a control character
    if (i - runStart > LONG_RUN) {
      parts.push(s.slice(start, runStart + 160), `[… ${i - runStart - 260} characters cut …]`);
      start = i - 100;
    }
    runStart = i + 1;
  }
  parts.push(s.slice(start));
  const out = parts.join("");
  return out.length <= MAX_MESSAGE
    ? out
    : `${out.slice(0, MAX_MESSAGE)}[… ${out.length - MAX_MESSAGE} characters of this message cut]`;
}

/** The result with its error message, or its refusal's reason and hint, cut short where they are long. */
export function shortened(r: CallResult): CallResult {
  if (r.status === "error") return { ...r, message: cutLongInputs(r.message) };
  if (r.status === "refused")
    return { ...r, reason: cutLongInputs(r.reason), ...(r.hint !== undefined ? { hint: cutLongInputs(r.hint) } : {}) };
  return r;
}
