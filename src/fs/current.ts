// The current bytes of a file, for a mutation (under its lock) and for an approval preview alike:
// read straight from disk, never through a final symlink, never from a pipe or device, and without
// touching the read ledger. One read, so the preview shows exactly what the write will start from.
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "./paths.js";
import { osPath } from "./names.js";

/** The file's bytes, or null when it does not exist. */
export async function readCurrentBytes(target: ResolvedPath): Promise<Buffer | null> {
  const cur = await openCurrent(target);
  if (cur === null) return null;
  try {
    return await cur.fh.readFile();
  } finally {
    await cur.fh.close();
  }
}

/** The file opened for reading with its stat, or null when it does not exist; the caller closes it. */
export async function openCurrent(target: ResolvedPath): Promise<{ fh: FileHandle; st: Stats } | null> {
  let fh;
  try {
    // O_NONBLOCK: a FIFO swapped in for the file must not block the host in open().
    fh = await open(osPath(target.abs), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") return null;
    if (code === "ELOOP")
      throw new Refusal(
        `\`${target.input}\` is a symbolic link now; latch neither writes through a link nor shows what is behind it, so nothing was written.`,
        "Write to the file it points to instead.",
      );
    throw err;
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new ToolError("EISDIR", `\`${target.rel}\` is a folder, not a file. Pass a file path.`);
    if (!st.isFile())
      throw new ToolError(
        "EISDIR",
        `\`${target.rel}\` is not a regular file (a pipe, socket or device). Pass a regular file.`,
      );
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}
