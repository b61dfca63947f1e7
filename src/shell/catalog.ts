// run_tool's program lookup: a simple name, looked for first in the root folder, then in each
// directory of the PATH captured at startup. Nothing here comes from model input but the name.
import { createHash } from "node:crypto";
import { constants, createReadStream } from "node:fs";
import { access, lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ToolError, errnoCode } from "../errors.js";
import { isInside } from "../fs/paths.js";

export const TOOL_ID = /^[A-Za-z0-9_.+-]{1,128}$/;

export interface CatalogProgram {
  /** The canonical file that runs. */
  path: string;
  sha256: string;
}

/** PATH entries that are absolute, existing folders, each as its own realpath too. */
export async function approvedDirs(pathDirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of pathDirs) {
    if (!path.isAbsolute(d)) continue;
    const st = await stat(d).catch(() => undefined); // a missing PATH entry is dropped
    if (!st?.isDirectory()) continue;
    out.push(d);
  }
  return out;
}

export async function resolveCatalogTool(
  toolId: string,
  root: string,
  pathDirs: readonly string[],
): Promise<CatalogProgram> {
  const dirs = await approvedDirs(pathDirs);
  const realDirs = await Promise.all(dirs.map((d) => realpath(d)));
  for (const dir of [root, ...dirs]) {
    const candidate = path.join(dir, toolId);
    try {
      await lstat(candidate);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") continue;
      throw err;
    }
    let real: string;
    try {
      real = await realpath(candidate);
    } catch (err) {
      throw new ToolError(
        "EBADTOOL",
        `The tool \`${toolId}\` at ${candidate} cannot be resolved (${errnoCode(err) ?? "error"}); fix or remove that entry.`,
      );
    }
    if (!isInside(root, real) && ![...dirs, ...realDirs].some((d) => isInside(d, real))) {
      throw new ToolError(
        "EBADTOOL",
        `The tool \`${toolId}\` at ${candidate} leads to ${real}, outside the root and every PATH folder; latch will not run it. Remove the link or install the tool properly.`,
      );
    }
    const st = await stat(real);
    if (!st.isFile())
      throw new ToolError(
        "EBADTOOL",
        `The tool \`${toolId}\` at ${candidate} is not a regular file; remove it or pick another name.`,
      );
    try {
      await access(real, constants.X_OK);
    } catch (err) {
      if (errnoCode(err) === "EACCES") continue; // no execute bit: not a program, look further
      throw err;
    }
    return { path: real, sha256: await sha256File(real) };
  }
  throw new ToolError(
    "ENOENT",
    `No program named \`${toolId}\` was found in the workspace root or on the PATH latch started with. Check the name with the user.`,
  );
}

function sha256File(p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(p)
      .on("data", (c) => h.update(c))
      .on("error", reject)
      .on("end", () => resolve(h.digest("hex")));
  });
}
