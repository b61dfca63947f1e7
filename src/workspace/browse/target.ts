// The stat every browse tool starts from, with an error that names the fix when the path is missing.
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { ToolError, errnoCode } from "../../errors.js";
import type { ResolvedPath } from "../paths.js";

export async function statTarget(target: ResolvedPath): Promise<Stats> {
  try {
    return await stat(target.abs);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      throw new ToolError("ENOENT", `\`${target.input}\` does not exist. Check the name with list_dir or find_files.`);
    }
    throw err;
  }
}
