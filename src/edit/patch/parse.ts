// Which format a patch is in, and its parsed form. Lines are split on LF with a CR before it
// dropped, so a patch sent with CRLF line breaks reads the same.
import { parseCodex } from "./parse-codex.js";
import { parseUnified } from "./parse-unified.js";
import { syntaxError, type ParsedPatch } from "./types.js";

export function parsePatch(patch: string): ParsedPatch {
  const lines = patch.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const first = lines.find((l) => l.trim() !== "")?.trim() ?? "";
  if (first === "*** Begin Patch" || /^<<['"]?EOF['"]?$/.test(first))
    return { format: "codex", ops: parseCodex(lines) };
  if (lines.some((l, i) => l.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) || first.startsWith("diff --git "))
    return { format: "unified", ops: parseUnified(lines) };
  throw syntaxError(
    1,
    "this is neither Codex's patch format (`*** Begin Patch` … `*** End Patch`) nor a unified diff (`--- a/PATH`, `+++ b/PATH`, `@@ … @@`).",
  );
}

/** The bytes of an added file: its lines, each ended with a newline unless the patch said not to. */
export function addedContent(lines: string[], noEol: boolean): string {
  if (lines.length === 0) return "";
  return lines.join("\n") + (noEol ? "" : "\n");
}
