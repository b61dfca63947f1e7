// Acting on a path inside the root without following a link on the way, race-free. The resolver
// (paths.ts) answers the policy's question with a realpath; by the time a tool opens, creates or
// renames, a process in the workspace may have swapped a folder on that path for a link to anywhere.
// So every file operation walks from the root down ONE COMPONENT AT A TIME, each folder opened with
// O_DIRECTORY|O_NOFOLLOW (a link is refused, not followed), and acts THROUGH the last folder's
// descriptor. Node has no openat(), but on Linux the kernel resolves `/proc/self/fd/<fd>/<name>`
// through the descriptor: the folder may be renamed or swapped by name afterwards, the name still
// lands in the folder that was checked. The final name is opened with O_NOFOLLOW by the callers.
// Without /proc (macOS), the names are used as they are and each opened folder's device and inode
// are compared with a fresh lstat of its path (`check()`): fs.realpath of /dev/fd is not reliable
// there. That narrows the window to between the check and the call; it cannot close it.
// The calls are synchronous, as in paths.ts: a few µs each, cheaper than thread-pool trips.
// On Linux the walk is the fallback: a folder is first opened by its whole name and taken only if
// /proc says it is at that very name now (openDirect), one open instead of one per folder.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { osPath, showName } from "./names.js";
import type { ResolvedPath } from "./paths.js";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Whether names are resolved through descriptors (/proc/self/fd); a test may turn it off to run the fallback. */
export const beneathMode = { proc: process.platform === "linux" && existsSync("/proc/self/fd") };

/** What the operation was doing, for the refusal when a folder on the way changed. */
export type Doing = "reading" | "writing" | "moving" | "deleting" | "making";
const NOTHING: Record<Doing, string> = {
  reading: "nothing was read",
  writing: "nothing was written",
  moving: "nothing was moved",
  deleting: "nothing was deleted",
  making: "nothing was made outside the workspace",
};

/** A folder on the path changed (into a link, or another folder) between the check and the operation. */
export function folderChanged(rel: string, what: string, doing: Doing): Refusal {
  return new Refusal(
    `The folder \`${showName(rel)}\` changed while ${doing} (${what}); ${NOTHING[doing]}.`,
    "Something in the workspace is changing that folder now; check it with list_dir, then retry.",
  );
}

/**
 * A folder on the path is missing (moved or removed meanwhile, or never made). Its code stays ENOENT,
 * so a caller for whom "missing" means "no file" (a read, lstatBeneath) still sees it as such.
 */
export function folderGone(rel: string, doing: Doing): ToolError {
  return new ToolError(
    "ENOENT",
    `The folder \`${showName(rel)}\` does not exist (moved or removed while ${doing}?); ${NOTHING[doing]}. Check the path with list_dir.`,
  );
}

/** A folder inside the root, opened by the walk; close it when done. */
export interface Folder {
  readonly fd: number;
  /** Root-relative slash path ("." for the root). */
  readonly rel: string;
  /** Its absolute path when walked (for messages, the temp-file record, and the fallback's checks). */
  readonly abs: string;
  /** Root-relative paths of the folders this walk made, top first. */
  readonly made: readonly string[];
  /** A path for fs calls naming `name` in this folder, resolved through the descriptor. */
  at(name: string): string | Buffer;
  /** The folder itself, for readdir. */
  self(): string | Buffer;
  /** Without /proc: the folders on the way are still the ones opened, or the changed refusal. On Linux a no-op. */
  check(): void;
  /** fsync the folder (a rename or new entry in it survives a crash). */
  sync(): void;
  close(): void;
}

export interface WalkOptions {
  /** Make missing folders, each through its parent's descriptor (mkdir -p that never lands outside). */
  create?: boolean;
  doing?: Doing;
}

/**
 * Open `rel` (root-relative, slash-separated, as the resolver gives it) from `root` down. A link on
 * the way is refused (folderChanged); a missing folder throws ENOENT, a file in the way ENOTDIR, as
 * node's errors (callers that treat "missing" as null keep working).
 */
export function openFolder(root: string, rel: string, opts: WalkOptions = {}): Folder {
  const doing = opts.doing ?? "writing";
  const parts = rel === "." || rel === "" ? [] : rel.split("/");
  const proc = beneathMode.proc;
  if (proc && parts.length) {
    const abs = `${root === "/" ? "" : root}/${rel}`;
    const fd = openDirect(abs, DIR_FLAGS);
    if (fd !== undefined) return folderOf(root, fd, rel, abs, [], [], doing);
  }
  // Linux keeps only the current descriptor open; the fallback keeps every folder's, to re-check them.
  const held: { fd: number; abs: string }[] = [];
  const made: string[] = [];
  let fd = openSync(osPath(root), DIR_FLAGS);
  let abs = root;
  if (!proc) held.push({ fd, abs });
  try {
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i];
      if (name === "" || name === "." || name === "..")
        throw new Error(`openFolder: ${JSON.stringify(rel)} is not a clean relative path`);
      const child = childPath(proc, fd, abs, name);
      let next: number;
      try {
        next = openSync(child, DIR_FLAGS);
      } catch (err) {
        const here = parts.slice(0, i + 1).join("/");
        if (errnoCode(err) === "ENOENT" && opts.create) {
          try {
            mkdirSync(child, 0o777);
            made.push(here);
          } catch (e) {
            if (errnoCode(e) === "ENOENT") throw folderGone(parts.slice(0, i).join("/") || ".", doing);
            if (errnoCode(e) !== "EEXIST") throw e;
          }
          next = openChecked(child, here, doing);
        } else if (errnoCode(err) === "ENOENT") throw folderGone(here, doing);
        else throw walkError(err, child, here, doing);
      }
      if (proc)
        closeSync(fd); // the child's descriptor alone pins the folder
      else {
        abs = path.join(abs, name);
        held.push({ fd: next, abs });
      }
      fd = next;
    }
  } catch (err) {
    if (proc) closeQuietly(fd);
    else for (const h of held) closeQuietly(h.fd);
    throw err;
  }
  const dirAbs = proc && parts.length ? `${root === "/" ? "" : root}/${rel}` : abs;
  const folder = folderOf(root, fd, parts.length ? rel : ".", dirAbs, made, held, doing);
  try {
    folder.check();
  } catch (err) {
    folder.close();
    throw err;
  }
  return folder;
}

function folderOf(
  root: string,
  dirFd: number,
  rel: string,
  dirAbs: string,
  made: string[],
  held: { fd: number; abs: string }[],
  doing: Doing,
): Folder {
  const proc = beneathMode.proc;
  const check = () => {
    if (proc) return;
    for (const h of held) {
      const now = lstatSync(osPath(h.abs), { throwIfNoEntry: false });
      const was = fstatSync(h.fd);
      if (!now || !now.isDirectory() || now.ino !== was.ino || now.dev !== was.dev)
        throw folderChanged(
          toRelOf(root, h.abs),
          now?.isSymbolicLink() ? "it is now a link" : "it was replaced",
          doing,
        );
    }
  };
  return {
    fd: dirFd,
    rel,
    abs: dirAbs,
    made,
    at: (name) => childPath(proc, dirFd, dirAbs, name),
    self: () => (proc ? `/proc/self/fd/${dirFd}` : osPath(dirAbs)),
    check,
    sync: () => fsyncSync(dirFd),
    close: () => {
      if (proc) closeQuietly(dirFd);
      else for (const h of held) closeQuietly(h.fd);
    },
  };
}

/**
 * The folder `name` inside `parent`, opened through it (no link followed): one step down, for walks
 * that go folder by folder and keep each open while they list it. `parent` stays open; close both.
 * A link there is refused (folderChanged), a missing folder throws ENOENT, as openFolder.
 */
export function openChild(root: string, parent: Folder, name: string, doing: Doing = "reading"): Folder {
  const rel = parent.rel === "." ? name : `${parent.rel}/${name}`;
  // Without /proc a step is a walk from the root, which keeps every folder on the way to re-check.
  if (!beneathMode.proc) return openFolder(root, rel, { doing });
  const child = parent.at(name);
  let fd: number;
  try {
    fd = openSync(child, DIR_FLAGS);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") throw folderGone(rel, doing);
    throw walkError(err, child, rel, doing);
  }
  return folderOf(root, fd, rel, `${parent.abs === "/" ? "" : parent.abs}/${name}`, [], [], doing);
}

/**
 * Open `abs` (a path inside the root, built from the root's realpath and a link-free relative path)
 * by its whole name, and keep the descriptor only if the kernel names the object it opened `abs`
 * itself (readlink of /proc/self/fd/N, byte for byte); undefined on any failure or mismatch, where
 * the caller walks (which refuses a link on the way, or reports the error). Sound because the check
 * is of the opened object, not of the name: the open may follow a link a racer put on the way, but
 * then the object's own path is elsewhere and it is not used. An object outside the root cannot
 * come to be at `abs` between the open and the check: a contained process cannot write outside the
 * root, so it cannot move an outside object in (nor hard-link one across the sandbox's mounts, and
 * readers refuse files with more than one link anyway). So the object is the one at `abs` inside
 * the root when checked, which is what the walk proves too: what happens after is the same for both.
 */
function openDirect(abs: string, flags: number): number | undefined {
  const name = osPath(abs);
  let fd: number;
  try {
    fd = openSync(name, flags);
  } catch {
    return undefined;
  }
  let real: Buffer | undefined;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`, { encoding: "buffer" });
  } catch {
    real = undefined;
  }
  if (real?.equals(typeof name === "string" ? Buffer.from(name) : name)) return fd;
  closeSync(fd);
  return undefined;
}

/** Flags of every read through the walk: no final link, and a FIFO swapped in must not block open(). */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Open the file `name` for reading through the opened folder `dir`, or null when it is missing. The
 * caller checks what it is (fstat). Without /proc, the file opened is re-checked against its name.
 */
export function openFileAt(dir: Folder, name: string, doing: Doing = "reading", extraFlags = 0): number | null {
  let fd: number;
  try {
    fd = openSync(dir.at(name), READ_FLAGS | extraFlags);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  try {
    dir.check();
    if (!beneathMode.proc) sameAsNamed(fd, dir, name, doing);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

function childPath(proc: boolean, fd: number, abs: string, name: string): string | Buffer {
  return osPath(proc ? `/proc/self/fd/${fd}/${name}` : path.join(abs, name));
}

function openChecked(child: string | Buffer, here: string, doing: Doing): number {
  try {
    return openSync(child, DIR_FLAGS);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") throw folderGone(here, doing); // made, and removed at once
    throw walkError(err, child, here, doing);
  }
}

/** A link where a folder was walked is the attack this module exists for: refused by name. */
function walkError(err: unknown, child: string | Buffer, here: string, doing: Doing): unknown {
  const code = errnoCode(err);
  if (code === "ENOTDIR" || code === "ELOOP") {
    const now = lstatSync(child, { throwIfNoEntry: false });
    if (now?.isSymbolicLink()) return folderChanged(here, "it is now a link", doing);
    // A folder again, or gone, a moment after the open found no folder there: swapped meanwhile
    // (review g60 saw the raw error, naming latch's /proc path, when a link was exchanged back).
    if (now === undefined || now.isDirectory()) return folderChanged(here, "it was replaced as latch opened it", doing);
    return new ToolError(
      "ENOTDIR",
      `\`${showName(here)}\` is not a folder (${kindOf(now)}); ${NOTHING[doing]}. Check the path with list_dir.`,
    );
  }
  return err;
}

/** What a non-folder entry is, for a message. */
function kindOf(st: Stats): string {
  return st.isFile() ? "a file" : st.isFIFO() ? "a pipe" : st.isSocket() ? "a socket" : "a device";
}

function toRelOf(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === "" ? "." : rel;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** The root a resolved path was resolved in: `abs` is `root` joined with `rel`. */
export function rootOf(target: Pick<ResolvedPath, "abs" | "rel">): string {
  if (target.rel === ".") return target.abs;
  const tail = "/" + target.rel;
  if (path.isAbsolute(target.rel) || !target.abs.endsWith(tail))
    throw new Error(`rootOf: ${target.abs} does not end with its root-relative path ${target.rel}`);
  return target.abs.slice(0, -tail.length) || "/";
}

/** The folder holding `target`, opened by the walk, and the target's name in it. The root itself has none. */
export function openParent(
  target: Pick<ResolvedPath, "abs" | "rel">,
  opts: WalkOptions = {},
): { dir: Folder; name: string } {
  if (target.rel === ".") throw new Error("openParent: the root has no parent inside the root");
  const i = target.rel.lastIndexOf("/");
  const dir = openFolder(rootOf(target), i === -1 ? "." : target.rel.slice(0, i), opts);
  return { dir, name: target.rel.slice(i + 1) };
}

/** lstat of `target` through its walked folder; undefined when it (or a folder on its way) is missing. */
export function lstatBeneath(target: Pick<ResolvedPath, "abs" | "rel">, doing: Doing = "reading"): Stats | undefined {
  if (target.rel === ".") return lstatSync(osPath(target.abs));
  let opened;
  try {
    opened = openParent(target, { doing });
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
  try {
    return lstatSync(opened.dir.at(opened.name), { throwIfNoEntry: false });
  } finally {
    opened.dir.close();
  }
}

/**
 * Open the file `target` for reading through its walked folder (O_NOFOLLOW, O_NONBLOCK: a FIFO must
 * not block), or null when it or a folder on its way is missing. The caller checks what it is (fstat).
 */
export function openFileBeneath(
  target: Pick<ResolvedPath, "abs" | "rel">,
  doing: Doing = "reading",
  /** Added to READ_FLAGS (O_NOATIME for a read that must leave no trace). */
  extraFlags = 0,
): number | null {
  if (target.rel === ".") return openSync(osPath(target.abs), READ_FLAGS | extraFlags); // the root: a folder, which the caller refuses
  // The folder is opened by its whole name (openFolder's direct open), the file then through it: a
  // file opened by its whole name could pass through a link a racer made to /dev, and opening some
  // devices acts (a terminal becomes the controlling one); a folder open (O_DIRECTORY) never does.
  let opened;
  try {
    opened = openParent(target, { doing });
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  try {
    return openFileAt(opened.dir, opened.name, doing, extraFlags);
  } finally {
    opened.dir.close();
  }
}

/** Without /proc: the file opened is the one the name holds now, in the folder checked. */
function sameAsNamed(fd: number, dir: Folder, name: string, doing: Doing): void {
  const now = lstatSync(dir.at(name), { throwIfNoEntry: false });
  const was = fstatSync(fd);
  if (!now || now.ino !== was.ino || now.dev !== was.dev)
    throw folderChanged(dir.rel, `\`${showName(name)}\` in it was replaced`, doing);
}

/**
 * The checks every read makes on the file it opened: a regular file with one link. A hard link made
 * earlier from inside the workspace to a file outside it would otherwise be read from here.
 */
export function hardLinkRefusal(rel: string, links: number): Refusal {
  return new Refusal(
    `\`${showName(rel)}\` has ${links} hard links: the same file is reachable by another path, maybe outside the workspace, so latch neither reads nor writes it.`,
    "Copy it to a file of its own (cp, then mv over it in the shell) if you mean to use this path; do not retry as is.",
  );
}
