// The current bytes of a file, for a mutation (under its lock) and for an approval preview alike:
// read straight from disk, never through a final symlink, never from a pipe or device, and without
// touching the read ledger. One read, so the preview shows exactly what the write will start from.
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "./paths.js";
import { osPath } from "./names.js";
import { beneathMode, hardLinkRefusal, openParent, sameAsNamed, type Doing } from "./beneath.js";

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

/**
 * The file opened for reading with its stat, or null when it does not exist; the caller closes it.
 * Opened through the walk (beneath.ts): no link on the way is followed, and a hard-linked file is refused.
 */
export async function openCurrent(
  target: ResolvedPath,
  doing: Doing = "reading",
): Promise<{ fh: FileHandle; st: Stats } | null> {
  let fh;
  try {
    fh = await openThrough(target, doing);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ELOOP")
      throw new Refusal(
        `\`${target.input}\` is a symbolic link now; latch neither writes through a link nor shows what is behind it, so nothing was written.`,
        "Write to the file it points to instead.",
      );
    throw err;
  }
  if (fh === null) return null;
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new ToolError("EISDIR", `\`${target.rel}\` is a folder, not a file. Pass a file path.`);
    if (!st.isFile())
      throw new ToolError(
        "EISDIR",
        `\`${target.rel}\` is not a regular file (a pipe, socket or device). Pass a regular file.`,
      );
    if (st.nlink > 1) throw hardLinkRefusal(target.rel, st.nlink);
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** open(2) of the name in its walked folder; null when it or a folder on its way is missing. */
async function openThrough(target: ResolvedPath, doing: Doing): Promise<FileHandle | null> {
  // O_NONBLOCK: a FIFO swapped in for the file must not block the host in open().
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  if (target.rel === ".") return open(osPath(target.abs), flags);
  let opened;
  try {
    opened = openParent(target, { doing });
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  const { dir, name } = opened;
  try {
    let fh;
    try {
      fh = await open(dir.at(name), flags);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return null;
      throw err;
    }
    try {
      dir.check();
      if (!beneathMode.proc) sameAsNamed(fh.fd, dir, name, doing);
    } catch (err) {
      await fh.close();
      throw err;
    }
    return fh;
  } finally {
    dir.close();
  }
}
