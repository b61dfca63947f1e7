// Reading one source file for the AST tools: never through a final symlink, bounded by
// `_max_read_bytes`, text only. A file that cannot be read as source says why, so a tree search can
// count it as skipped and outline can refuse it with a reason.
import { Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { humanSize, looksBinary, SNIFF_BYTES } from "../fs/text.js";
import { openCurrent } from "../fs/current.js";
import { showName } from "../fs/names.js";

export type Source =
  { text: string } | { leftOut: "too large" | "binary" | "not a file" | "unreadable"; detail: string };

/**
 * `at` is opened through the walk by descriptors (src/fs/beneath.ts), from the root down: a folder
 * swapped for a link since the path was resolved (outline) or listed (ast_search) is never followed.
 * For a tree search (`walked`) a file that changed so (a link now, a hard link) is left out, not fatal.
 */
export async function readSource(
  at: Pick<ResolvedPath, "abs" | "rel">,
  maxBytes: number,
  walked = false,
): Promise<Source> {
  let fh;
  try {
    const cur = await openCurrent({ input: at.rel, exists: true, ...at });
    if (cur === null) return { leftOut: "unreadable", detail: "ENOENT" };
    fh = cur.fh;
  } catch (err) {
    if (walked && err instanceof Refusal) return { leftOut: "unreadable", detail: "changed while searched" };
    if (err instanceof ToolError && err.code === "EISDIR")
      return { leftOut: "not a file", detail: "not a regular file" };
    const code = errnoCode(err);
    // ENOTDIR: a file where a folder on the way was (the tree changed since it was walked).
    if (code === "ENOENT" || code === "EACCES" || code === "ELOOP" || code === "EPERM" || code === "ENOTDIR")
      return { leftOut: "unreadable", detail: code };
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { leftOut: "not a file", detail: "not a regular file" };
    if (st.size > maxBytes)
      return { leftOut: "too large", detail: `${humanSize(st.size)}, over _max_read_bytes (${humanSize(maxBytes)})` };
    const bytes = await fh.readFile();
    if (looksBinary(bytes.subarray(0, SNIFF_BYTES))) return { leftOut: "binary", detail: "binary content" };
    return { text: bytes.toString("utf8") };
  } finally {
    await fh.close();
  }
}

/** Outline reads one file: anything that is not readable source is refused with the fix. */
export function refuseSource(target: ResolvedPath, s: Exclude<Source, { text: string }>): Error {
  if (s.leftOut === "too large")
    return new Refusal(
      `\`${showName(target.rel)}\` is ${s.detail}.`,
      `Read the part you need with read_file_range, or find it with ast_search.`,
    );
  if (s.leftOut === "binary")
    return new Refusal(`\`${showName(target.rel)}\` is a binary file; outline reads source files only.`);
  if (s.leftOut === "not a file")
    return new ToolError(
      "EISDIR",
      `\`${showName(target.rel)}\` is not a file. Pass a source file, or search a folder with ast_search.`,
    );
  if (s.detail === "ENOENT")
    return new ToolError(
      "ENOENT",
      `\`${showName(target.rel)}\` does not exist. Check the path with find_files or list_dir.`,
    );
  return new ToolError(ioCode(s.detail), `\`${showName(target.rel)}\` cannot be read (${s.detail}).`);
}
