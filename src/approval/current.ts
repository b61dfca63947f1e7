// The current bytes of a file, for a preview: read straight from disk (no cache), never through a
// final symlink, and without touching the read ledger (a preview is not a read by the model).
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "../workspace/paths.js";

export async function readCurrentForPreview(target: ResolvedPath): Promise<Buffer | null> {
  let fh;
  try {
    fh = await open(target.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw new Refusal(`\`${target.input}\` is a symbolic link, so its content cannot be shown safely.`, "Write to the file it points to instead.");
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new ToolError("EISDIR", `\`${target.rel}\` is not a regular file. Pass a file path.`);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}
