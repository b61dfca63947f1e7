// The stat every browse tool starts from, with an error that names the fix when the path is missing.
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "../fs/paths.js";
import { osPath } from "../fs/names.js";

export async function statTarget(target: ResolvedPath): Promise<Stats> {
  try {
    return await stat(osPath(target.abs));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      throw new ToolError("ENOENT", `\`${target.input}\` does not exist. Check the name with list_dir or find_files.`);
    }
    throw err;
  }
}

/** Pipes, sockets and devices are refused: reading one could block the call (and the host) forever. */
export function requireFileOrFolder(st: Stats, target: ResolvedPath): void {
  if (!st.isFile() && !st.isDirectory()) {
    throw new ToolError(
      "ENOTFILE",
      `\`${target.rel}\` is not a regular file or folder (a pipe, socket or device). Pass a file or a folder.`,
    );
  }
}
