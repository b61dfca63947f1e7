// edit_file's edits, applied in order to the text each previous edit left, all or nothing: one
// edit that does not match (or matches more than once without replace_all) fails the whole call,
// naming which edit, and the file is not written.
import { ToolError } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { closestLines, noMatch, occurrenceLines, prepareNeedle, replaceIn, tooMany } from "./replace.js";

export interface StringEdit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export function checkEdits(edits: StringEdit[]): void {
  edits.forEach((e, i) => {
    if (e.old_string === e.new_string)
      throw new ToolError(
        "EINVAL",
        `${which(i, edits.length)}\`old_string\` and \`new_string\` are the same, so there is nothing to change. Pass the new text as new_string.`,
      );
  });
}

/** The text after every edit, and how many replacements each made. */
export function applyEdits(
  text: string,
  edits: StringEdit[],
  target: ResolvedPath,
): { after: string; replacements: number[] } {
  const counts: number[] = [];
  edits.forEach((e, i) => {
    const needle = prepareNeedle(text, e.old_string, e.new_string);
    const label = which(i, edits.length);
    if (needle.count === 0) {
      const near = closestLines(text, e.old_string);
      const err = noMatch(target, near ? `The closest lines are:\n${near}` : "");
      const after = i > 0 ? " (matched against the text as the edits before it left it)" : "";
      throw new ToolError(
        err.code,
        `${label}${err.message.replace("; the file is unchanged", `${after}; the file is unchanged`)}`,
      );
    }
    if (needle.count > 1 && e.replace_all !== true) {
      const r = tooMany(target, needle.count, occurrenceLines(text, needle.find));
      throw new ToolError(r.code, `${label}${r.message}`);
    }
    text = replaceIn(text, needle, e.replace_all === true);
    counts.push(e.replace_all === true ? needle.count : 1);
  });
  return { after: text, replacements: counts };
}

function which(i: number, n: number): string {
  return n > 1 ? `Edit ${i + 1} of ${n}: ` : "";
}
