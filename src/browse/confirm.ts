// What ripgrep reports is confirmed through descriptors before latch shows it. rg opens paths by
// name itself, so a folder swapped for a link to outside between rg's lstat and its open would make
// it list or read outside files; nothing latch tells rg can stop that (it has no openat walk). So rg
// is only a finder: a name it lists is shown only if it is a regular, single-link file inside the
// root now, looked up through folders opened by the walk by descriptors (src/fs/beneath.ts); a line
// it found is shown only if the file, read through its descriptor, holds that same line at that same
// number. Whatever latch returns is then bytes and names it read inside the root itself: a file
// read outside either does not exist inside (dropped) or differs (dropped), or is the same bytes.
// What stays unconfirmed is a count: matches past the cap in files whose lines are not kept.
import { closeSync, fstatSync, lstatSync, readSync } from "node:fs";
import { errnoCode, Refusal } from "../errors.js";
import { beneathMode, openChild, openFileAt, openFolder, type Folder } from "../fs/beneath.js";
import type { FileHits } from "./grep-collect.js";

/** Folders kept open between lookups (rg lists a folder's files together, not in path order). */
const KEEP_FOLDERS = 32;
const CHUNK = 1 << 16;

/** Looks names up under `root` through folders opened by descriptor; close() when done. */
export class BeneathLookup {
  private readonly folders = new Map<string, Folder | undefined>();
  constructor(private readonly root: string) {}

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
      // Through its parent's descriptor, itself kept: rg lists the folders of one parent together.
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

  private split(rel: string): { dir: Folder | undefined; name: string } {
    const i = rel.lastIndexOf("/");
    return { dir: this.folder(i === -1 ? "." : rel.slice(0, i)), name: rel.slice(i + 1) };
  }

  /** Whether `rel` is a regular file inside the root now (find_files lists names: a hard link is one too). */
  isFile(rel: string): boolean {
    const { dir, name } = this.split(rel);
    if (!dir) return false;
    try {
      const st = lstatSync(dir.at(name), { throwIfNoEntry: false });
      dir.check();
      return st !== undefined && st.isFile();
    } catch (err) {
      if (err instanceof Refusal || errnoCode(err) === "EACCES" || errnoCode(err) === "ENOTDIR") return false;
      throw err;
    }
  }

  /**
   * Whether rg's hits for a file are what the file holds inside the root: it opens as a regular file
   * with one link through its folder's descriptor, and every line kept reads the same there (a binary
   * file shows no lines: it is only opened).
   */
  confirm(hits: FileHits, binary: boolean): boolean {
    const { dir, name } = this.split(hits.path);
    if (!dir) return false;
    let fd: number | null;
    try {
      fd = openFileAt(dir, name);
    } catch (err) {
      const code = errnoCode(err);
      if (err instanceof Refusal || ["ELOOP", "EACCES", "ENXIO", "EISDIR", "ENOTDIR"].includes(code ?? ""))
        return false;
      throw err;
    }
    if (fd === null) return false;
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.nlink !== 1) return false;
      if (binary || hits.lines.length === 0) return true;
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
    } finally {
      closeSync(fd);
    }
  }

  close(): void {
    for (const f of this.folders.values()) f?.close();
    this.folders.clear();
  }
}

/** Line ends aside (rg strips "\n" and "\r\n"; a multiline match may end inside "\r\r\n"): compared as text. */
function plain(s: string): string {
  return s.replace(/\r+(?=\n|$)/g, "");
}

/** The raw bytes (without "\n") of the `wanted` lines (1-based) of the file at `fd`, read up to the last one. */
function linesOf(fd: number, wanted: Set<number>): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  const last = Math.max(...wanted);
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
