// What a parsed patch is, whatever format it came in (Codex's `*** Begin Patch` or a unified diff):
// a list of file operations, each update a list of chunks located in the file's lines in order.
import { ToolError } from "../../errors.js";

export interface Chunk {
  /** Codex's `@@ text`: a line found first; the chunk is then matched after it. */
  anchor?: string;
  /** The lines the chunk expects (context and removed), and what stands there after (context and added). */
  old: string[];
  new: string[];
  /** Each line's kind in patch order (' ' context, '-' removed, '+' added), to keep the file's own context lines. */
  kinds: string;
  /** The chunk must match at the end of the file (Codex's `*** End of File`). */
  eof: boolean;
  /** Unified diffs: the 1-based line the old side starts at, tried first. */
  hint?: number;
  /** Unified diffs: `\ No newline at end of file` follows the new side's last line. */
  newNoEol?: boolean;
}

export type FileOp =
  | { kind: "add"; path: string; lines: string[]; noEol: boolean }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; chunks: Chunk[]; format: PatchFormat };

export type PatchFormat = "codex" | "unified";

export interface ParsedPatch {
  format: PatchFormat;
  ops: FileOp[];
}

/** A patch that cannot be parsed: the line at fault and what would be right there. */
export function syntaxError(line: number, message: string): ToolError {
  return new ToolError("EPATCHSYNTAX", `The patch is malformed at line ${line}: ${message} Nothing was changed.`);
}
