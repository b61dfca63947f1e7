// Reading one source file for the AST tools: never through a final symlink, bounded by
// `_max_read_bytes`, text only. A file that cannot be read as source says why, so a tree search can
// count it as skipped and outline can refuse it with a reason.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { humanSize, looksBinary, SNIFF_BYTES } from "../fs/text.js";
import { openCurrent } from "../fs/current.js";
import { osPath, showName } from "../fs/names.js";

export type Source =
  { text: string } | { leftOut: "too large" | "binary" | "not a file" | "unreadable"; detail: string };

/**
 * `at` a resolved path (outline) is opened through the walk by descriptors (src/fs/beneath.ts); a
 * walk's entry (ast_search) by its name, after the walk's own checks.
 */
export async function readSource(at: string | ResolvedPath, maxBytes: number): Promise<Source> {
  let fh;
  try {
    if (typeof at === "string") fh = await open(osPath(at), constants.O_RDONLY | constants.O_NOFOLLOW);
    else {
      const cur = await openCurrent(at);
      if (cur === null) return { leftOut: "unreadable", detail: "ENOENT" };
      fh = cur.fh;
    }
  } catch (err) {
    if (err instanceof ToolError && err.code === "EISDIR")
      return { leftOut: "not a file", detail: "not a regular file" };
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "EACCES" || code === "ELOOP" || code === "EPERM")
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
