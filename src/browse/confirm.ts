// What ripgrep reports is confirmed through descriptors before latch shows it. rg opens paths by
// name itself, so a folder swapped for a link to outside between rg's lstat and its open would make
// it list or read outside files; nothing latch tells rg can stop that (it has no openat walk). So rg
// is only a finder: a name it lists is shown only if it is a regular, single-link file inside the
// root now, looked up through folders opened by the walk by descriptors (src/fs/beneath.ts); a line
// it found is shown only if the file, read through its descriptor, holds that same line at that same
// number. And none of it stands unless every folder on the file's way is unchanged since before rg
// started (a steady folder, below): else rg may have read another file by that name, and what it
// found there, or did not, would tell of it (reviews g60, g61). After rg exits the whole tree is
// judged so too, and where it moved grep searches again itself (steady-tree.ts).
import { closeSync, fstatSync, lstatSync, readSync, statfsSync, type Stats } from "node:fs";
import { errnoCode, Refusal } from "../errors.js";
import { beneathMode, openChild, openFileAt, openFolder, type Folder } from "../fs/beneath.js";
import type { FileHits } from "./grep-collect.js";

/** Folders kept open between lookups (rg reports a folder's files together, not in path order). */
const KEEP_FOLDERS = 32;
const CHUNK = 1 << 16;

/**
 * Filesystems that stamp a folder's ctime with this machine's clock whenever an entry in it is made,
 * removed or renamed (ext4, XFS, Btrfs, tmpfs, overlayfs, F2FS, ZFS). Elsewhere (NFS, FUSE, …: another
 * clock, or the filesystem's own word) no folder counts as steady.
 */
export const STEADY_FS: ReadonlySet<number> = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1,
]);

/**
 * How long before rg started a folder must have stood still to count as steady: more than a coarse
 * clock tick, and than the whole second an ext4 inode of 128 bytes stores its times in.
 */
export const STEADY_MARGIN_MS = 2000;

/**
 * What confirm() makes of a file's hits: shown, dropped (the file inside is no longer what rg read),
 * or "unsteady": a folder on its way changed since before rg started, so rg may have read another
 * file by that name (dropped too; the walk after rg sees the change, steady-tree.ts).
 */
export type Verdict = "shown" | "dropped" | "unsteady";

/** Looks names up under `root` through folders opened by descriptor; close() when done. */
export class BeneathLookup {
  private readonly folders = new Map<string, Folder | undefined>();
  /** Folder rel → steady: it and every folder above it to the root unchanged since `steadyBefore`. */
  private readonly steady = new Map<string, boolean>();
  /** Whether the root's filesystem keeps ctimes as steadyFolder needs (STEADY_FS), and `steadyBefore` was given. */
  private readonly steadyFs: boolean;
  private rootDev = -1;

  /**
   * `steadyBefore` (ms since the epoch, for confirm and steadyFolder): a time before rg started,
   * STEADY_MARGIN_MS before it. A verdict covers what rg read before it was made: confirm is asked
   * while rg runs, so its verdicts are forgotten (forgetSteady) as each new piece of rg's output
   * arrives, which rg wrote after reading what it tells of.
   */
  constructor(
    private readonly root: string,
    private readonly steadyBefore?: number,
  ) {
    this.steadyFs = steadyBefore !== undefined && beneathMode.proc && keepsSteadyTimes(root);
  }

  /** The folder `rel` opened from the root by descriptors, or undefined when missing or swapped for a link. */
  private folder(rel: string): Folder | undefined {
    if (this.folders.has(rel)) {
      const f = this.folders.get(rel);
      this.folders.delete(rel); // most recently used last
      this.folders.set(rel, f);
      return f;
    }
    let f: Folder | undefined;
    try {
      // Through its parent's descriptor, itself kept: rg reports the files of one folder together.
      if (rel === "." || !beneathMode.proc) f = openFolder(this.root, rel, { doing: "reading" });
      else {
        const i = rel.lastIndexOf("/");
        const parent = this.folder(i === -1 ? "." : rel.slice(0, i));
        f = parent && openChild(this.root, parent, rel.slice(i + 1), "reading");
      }
    } catch (err) {
      const code = errnoCode(err);
      if (!(err instanceof Refusal) && code !== "ENOENT" && code !== "ENOTDIR" && code !== "EACCES") throw err;
    }
    this.folders.set(rel, f);
    if (this.folders.size > KEEP_FOLDERS) {
      const [oldest, gone] = this.folders.entries().next().value!;
      this.folders.delete(oldest);
      gone?.close();
    }
    return f;
  }

  /**
   * Whether folder `rel` and each folder above it are as they were when rg read them: none changed
   * since before rg started (ctime older than `steadyBefore`, on the root's filesystem). A folder
   * swapped for a link and back, an entry made, renamed or removed, each moves the ctime of the folder
   * holding it, and nobody can set a ctime back (utimensat stamps it now). So the path rg read by name
   * led to this folder, and its entries then are its entries now (a file swapped for a link or a pipe
   * would move the ctime too). A folder is judged by an lstat through its parent's descriptor; only a
   * parent is opened. Asked after rg exited (forgetSteady first), the verdict covers all of its run.
   */
  steadyFolder(rel: string): boolean {
    let v = this.steady.get(rel);
    if (v !== undefined) return v;
    v = false;
    if (!this.steadyFs) {
      // every name is looked up
    } else if (rel === ".") {
      const root = this.folder(".");
      if (root) {
        const st = fstatSync(root.fd);
        this.rootDev = st.dev;
        v = st.ctimeMs < this.steadyBefore!;
      }
    } else {
      const i = rel.lastIndexOf("/");
      const up = i === -1 ? "." : rel.slice(0, i);
      const parent = this.steadyFolder(up) ? this.folder(up) : undefined;
      const st = parent && this.lstatIn(parent, rel.slice(i + 1));
      v = st !== undefined && st.isDirectory() && st.dev === this.rootDev && st.ctimeMs < this.steadyBefore!;
    }
    this.steady.set(rel, v);
    return v;
  }

  /** The entry `name` of `dir`, not followed; undefined when it is missing or cannot be seen. */
  private lstatIn(dir: Folder, name: string): Stats | undefined {
    try {
      const st = lstatSync(dir.at(name), { throwIfNoEntry: false });
      dir.check();
      return st;
    } catch (err) {
      if (err instanceof Refusal || errnoCode(err) === "EACCES" || errnoCode(err) === "ENOTDIR") return undefined;
      throw err;
    }
  }

  private split(rel: string): { dir: Folder | undefined; name: string } {
    const i = rel.lastIndexOf("/");
    return { dir: this.folder(i === -1 ? "." : rel.slice(0, i)), name: rel.slice(i + 1) };
  }

  /** Forget the steady verdicts: each covers only what rg had read when it was made (see the constructor). */
  forgetSteady(): void {
    this.steady.clear();
  }

  /**
   * Whether rg's hits for a file may stand: every folder on its way unchanged since before rg started
   * (judged after rg wrote of the file: see the constructor), and the file inside a regular file with
   * one link whose kept lines read the same there (it may have changed in place since rg read it).
   */
  confirm(hits: FileHits, binary: boolean): Verdict {
    const i = hits.path.lastIndexOf("/");
    if (!this.steadyFolder(i === -1 ? "." : hits.path.slice(0, i))) return "unsteady";
    const fd = this.open(hits.path);
    if (fd === null) return "dropped";
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.nlink !== 1) return "dropped";
      return binary || this.linesRead(fd, hits) ? "shown" : "dropped";
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The file `rel` opened for reading through its folder's descriptor, or null when it is missing or
   * is no file to read (a link, a folder, a pipe: refused on the way). The caller closes it.
   */
  private open(rel: string): number | null {
    const { dir, name } = this.split(rel);
    if (!dir) return null;
    try {
      return openFileAt(dir, name);
    } catch (err) {
      const code = errnoCode(err);
      if (err instanceof Refusal || ["ELOOP", "EACCES", "ENXIO", "EISDIR", "ENOTDIR"].includes(code ?? "")) return null;
      throw err;
    }
  }

  /** Whether every line kept of `hits` reads the same, at the same number, in the file at `fd`. */
  private linesRead(fd: number, hits: FileHits): boolean {
    if (hits.lines.length === 0) return true;
    const wanted = new Set<number>();
    for (const l of hits.lines) for (let n = l.n; n <= (l.last ?? l.n); n++) wanted.add(n);
    const lines = linesOf(fd, wanted);
    return hits.lines.every((l) => {
      const parts: string[] = [];
      for (let n = l.n; n <= (l.last ?? l.n); n++) {
        const raw = lines.get(n);
        if (raw === undefined) return false;
        parts.push(raw.toString("utf8"));
      }
      return plain(parts.join("\n")) === plain(l.text);
    });
  }

  close(): void {
    for (const f of this.folders.values()) f?.close();
    this.folders.clear();
  }
}

/** Whether the root's filesystem keeps folder ctimes as a steady check needs (STEADY_FS). */
export function keepsSteadyTimes(root: string): boolean {
  return STEADY_FS.has(fsType(root));
}

/** The root's filesystem type (statfs f_type), or -1 when it cannot be read (then nothing is steady). */
function fsType(root: string): number {
  try {
    return Number(statfsSync(root).type);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "EACCES" || code === "ENOTDIR" || code === "ENOSYS") return -1;
    throw err;
  }
}

/** Line ends aside (rg strips "\n" and "\r\n"; a multiline match may end inside "\r\r\n"): compared as text. */
function plain(s: string): string {
  return s.replace(/\r+(?=\n|$)/g, "");
}

/** The raw bytes (without "\n") of the `wanted` lines (1-based) of the file at `fd`, read up to the last one. */
function linesOf(fd: number, wanted: Set<number>): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let last = 0;
  for (const w of wanted) last = Math.max(last, w);
  const buf = Buffer.allocUnsafe(CHUNK);
  let n = 1;
  let pending: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const got = readSync(fd, buf, 0, CHUNK, pos);
    if (got === 0) break;
    pos += got;
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl !== -1 && nl < got; nl = buf.indexOf(10, from)) {
      if (wanted.has(n)) out.set(n, Buffer.concat([...pending, buf.subarray(from, nl)]));
      pending = [];
      from = nl + 1;
      if (++n > last) return out;
    }
    if (wanted.has(n) && from < got) pending.push(Buffer.from(buf.subarray(from, got)));
  }
  if (pending.length > 0 || wanted.has(n)) out.set(n, Buffer.concat(pending)); // a last line without "\n"
  return out;
}
