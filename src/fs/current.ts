// The current bytes of a file, for a mutation (under its lock) and for an approval preview alike:
// read straight from disk, never through a final symlink, never from a pipe or device, and without
// touching the read ledger. One read, so the preview shows exactly what the write will start from.
import {
  close as closeLater,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  readFileSync,
  readSync,
  type Stats,
} from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "./paths.js";
import type { ReadPin } from "./same-file.js";
import { hardLinkRefusal, openFileAt, openFileBeneath, openParent, type Doing, type Folder } from "./beneath.js";

/**
 * Files up to this size are read synchronously (one read(2) or a few, ~µs on a cached file), not
 * through a FileHandle: five thread-pool trips (open, stat, stat, read, close) cost an edit more CPU
 * than the read, and under load each trip waits for a core. Larger files keep the loop free.
 */
const SYNC_READ_MAX = 1 << 20;

/** The file's bytes, or null when it does not exist. */
export async function readCurrentBytes(target: ResolvedPath): Promise<Buffer | null> {
  return bytesOf(openCurrentFd(target, "reading"));
}

/**
 * The same read, pinned for a write based on it (mutate(), a changeset): the folder the walk went
 * through stays open, and the file read there is named by its device and inode (ReadPin). The caller
 * closes the pin.
 */
export async function readCurrentPinned(target: ResolvedPath): Promise<{ bytes: Buffer | null; pin: ReadPin }> {
  const dir = holdParent(target);
  if (dir === undefined) return { bytes: target.rel === "." ? await readCurrentBytes(target) : null, pin: pinOf() };
  let cur: { fd: number; st: Stats } | null = null;
  try {
    cur = openCurrentFd(target, "writing", dir);
    if (cur === null) return { bytes: null, pin: pinOf(dir) };
    // Read through a descriptor of its own: the one opened stays open with the pin (see pinOf).
    const fd = cur.fd;
    const bytes = cur.st.size <= SYNC_READ_MAX ? readFileSync(fd) : await readAgain(fd);
    return {
      bytes,
      pin: pinOf(
        dir,
        cur.st,
        // On the thread pool: after a write, this is the replaced file's last descriptor, and its
        // close frees the file's blocks (~0.3 ms of an edit on this thread; see atomic-write.ts).
        () => closeLater(fd, () => undefined),
        () => sameBytes(fd, bytes),
      ),
    };
  } catch (err) {
    if (cur) closeSync(cur.fd);
    dir.close();
    throw err;
  }
}

/** openCurrent, pinned the same way (a streamed edit, too large to hold, reads and writes through it). */
export async function openCurrentPinned(
  target: ResolvedPath,
): Promise<{ cur: { fh: FileHandle; st: Stats } | null; pin: ReadPin }> {
  const dir = holdParent(target);
  if (dir === undefined) return { cur: target.rel === "." ? await openCurrent(target, "writing") : null, pin: pinOf() };
  try {
    // The caller holds the file open until the write is done (see pinOf).
    const fd = openCurrentFd(target, "writing", dir);
    const cur = fd && { fh: await handleOf(fd.fd), st: fd.st };
    return { cur, pin: pinOf(dir, cur?.st) };
  } catch (err) {
    dir.close();
    throw err;
  }
}

/** Whether the open file `fd` holds exactly `bytes` now (read from its start; one byte more shows it grew). */
function sameBytes(fd: number, bytes: Buffer): boolean {
  const now = Buffer.allocUnsafe(bytes.length + 1);
  let n = 0;
  for (let got = -1; got !== 0 && n < now.length; n += got) got = readSync(fd, now, n, now.length - n, n);
  return n === bytes.length && now.subarray(0, n).equals(bytes);
}

/** The whole file, through a second descriptor of the open file (its magic link: see handleOf), leaving `fd` open. */
async function readAgain(fd: number): Promise<Buffer> {
  const fh = await open(`${FD_DIR}/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** The folder a pinned read goes through, held for the write (its refusals say so); none for the root or a missing folder. */
function holdParent(target: ResolvedPath): Folder | undefined {
  if (target.rel === ".") return undefined;
  try {
    return openParent(target, { doing: "writing" }).dir;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined; // the write walks, and its name must still be missing
    throw err;
  }
}

/**
 * The pin of a read: its folder, and its file by device and inode. The file must be held open as long
 * as the pin is (`release` closes it, or the caller holds it): a file whose last link went and which
 * nothing holds open frees its inode number, and a file made next may be given it and pass for it.
 */
function pinOf(dir?: Folder, st?: Stats, release?: () => void, unchanged?: () => boolean): ReadPin {
  let open = dir !== undefined;
  const close = () => {
    if (open) dir!.close(); // once: a descriptor closed twice may be another's by then
    if (open) release?.();
    open = false;
  };
  return { dir, file: st ? { dev: st.dev, ino: st.ino, ctimeMs: st.ctimeMs } : null, close, unchanged };
}

async function bytesOf(cur: { fd: number; st: Stats } | null): Promise<Buffer | null> {
  if (cur === null) return null;
  if (cur.st.size <= SYNC_READ_MAX) {
    try {
      return readFileSync(cur.fd);
    } finally {
      closeSync(cur.fd);
    }
  }
  const fh = await handleOf(cur.fd);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
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
  const cur = openCurrentFd(target, doing);
  if (cur === null) return null;
  return { fh: await handleOf(cur.fd), st: cur.st };
}

/** openCurrent's descriptor, synchronously: the checks of what it is (a regular file, one link) made on it. */
function openCurrentFd(target: ResolvedPath, doing: Doing, dir?: Folder): { fd: number; st: Stats } | null {
  let fd;
  try {
    fd = dir ? openFileAt(dir, path.posix.basename(target.rel), doing) : openFileBeneath(target, doing);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ELOOP")
      throw new Refusal(
        `\`${target.input}\` is a symbolic link now; latch neither writes through a link nor shows what is behind it, so nothing was written.`,
        "Write to the file it points to instead.",
      );
    throw err;
  }
  if (fd === null) return null;
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new ToolError("EISDIR", `\`${target.rel}\` is a folder, not a file. Pass a file path.`);
    if (!st.isFile())
      throw new ToolError(
        "EISDIR",
        `\`${target.rel}\` is not a regular file (a pipe, socket or device). Pass a regular file.`,
      );
    if (st.nlink > 1) throw hardLinkRefusal(target.rel, st.nlink);
    return { fd, st };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * The file opened by the walk, as a FileHandle for the async readers (the descriptor is closed). Node
 * cannot wrap a descriptor in a FileHandle, so the opened file is opened again through its
 * descriptor's magic link (/proc/self/fd/N, or /dev/fd/N where it dups): that names the open file
 * itself, not a path, so the check and the use stay the same object.
 */
async function handleOf(fd: number): Promise<FileHandle> {
  try {
    return await open(`${FD_DIR}/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
  } finally {
    closeSync(fd);
  }
}

const FD_DIR = existsSync("/proc/self/fd") ? "/proc/self/fd" : "/dev/fd";
