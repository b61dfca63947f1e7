// Detector (c) of issue 29: the contents of the workspace's quarantined files (`.env`, keys, … the
// credential quarantine, found by the sandbox's cached walk) as known values, so that when they come
// back verbatim through another door (`git log -p`, an archive listing, a diff) they are redacted
// even where they have no recognisable format. From each file (up to MAX_FILE_BYTES) the values of
// `NAME=value` / `name: value` lines, and other lines of 16 characters or more, are taken.
import { closeSync, constants, fstatSync, readFileSync } from "node:fs";
import path from "node:path";
import { errnoCode, Refusal } from "../errors.js";
import { openFileBeneath } from "../fs/beneath.js";
import { racy } from "../fs/racy.js";
import { scanWorkspace } from "../sandbox/secrets.js";
import { MIN_KNOWN_LENGTH, type Needle } from "./known.js";

const MAX_FILE_BYTES = 64 * 1024;
const MAX_PER_FILE = 200;
const MAX_NEEDLES = 2000;
const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][\w.-]*\s*[=:]\s*(.*?)\s*$/;
/** Values that are no secret: booleans, numbers, short words a config repeats everywhere. */
const BORING =
  /^(?:true|false|null|none|yes|no|on|off|\d+(?:\.\d+)?|localhost|127\.0\.0\.1|development|production|test)$/i;

const cache = new Map<string, { mtimeMs: number; ctimeMs: number; size: number; needles: Needle[] }>();
/** The last answer per root, returned as the same array while no file changed (the scanner compares by identity first). */
const last = new Map<string, { key: string; needles: Needle[]; at: number }>();
/**
 * How long an answer is reused without walking again (ms): the walk is one lstat per folder when
 * nothing changed, yet thousands of folders (a vendored tree) make that ~20 ms, more than a read.
 */
const REUSE_MS = 1000;

/** The needles of every quarantined file under `root` (cached per file by mtime and size). */
export function quarantinedNeedles(root: string): Needle[] {
  const prev = last.get(root);
  if (prev && performance.now() - prev.at < REUSE_MS) return prev.needles;
  const out: Needle[] = [];
  const stamp: string[] = [];
  for (const abs of scanWorkspace(root).secrets) {
    if (out.length >= MAX_NEEDLES) break;
    const rel = path.relative(root, abs).split(path.sep).join("/");
    if (rel === "" || rel.startsWith("../")) continue;
    const fd = openQuietly({ abs, rel });
    if (fd === null) continue;
    let hit;
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.nlink > 1 || st.size > MAX_FILE_BYTES) continue; // a hard link may be a file outside
      hit = cache.get(abs);
      // By ctime too, and not kept when read too soon after it (fs/racy.ts): a value changed in place
      // in the same tick, at the same size, kept its mtime.
      const fresh = racy(Date.now(), st.ctimeMs);
      if (!hit || hit.mtimeMs !== st.mtimeMs || hit.ctimeMs !== st.ctimeMs || hit.size !== st.size || fresh) {
        hit = { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, needles: valuesOf(readText(fd), rel) };
        if (fresh) cache.delete(abs);
        else cache.set(abs, hit);
      }
      stamp.push(fresh ? `${abs}:racy:${Math.random()}` : `${abs}:${st.mtimeMs}:${st.ctimeMs}:${st.size}`);
    } finally {
      closeSync(fd);
    }
    for (const item of hit.needles) out.push(item);
  }
  const key = stamp.join("\0");
  const at = performance.now();
  if (prev?.key === key) {
    prev.at = at;
    return prev.needles;
  }
  const needles = out.slice(0, MAX_NEEDLES);
  last.set(root, { key, needles, at });
  return needles;
}

/**
 * The file opened to recognise its values, never to show them: through the walk by descriptors
 * (src/fs/beneath.ts), so a folder on the way swapped for a link by a process in the workspace is
 * refused, never followed to a file outside; with O_NOATIME where the kernel allows it (the file's
 * owner, or root), so the access time still says whether a tool read the file. Null when it is gone,
 * a link, unreadable, or a folder on its way changed: nothing to look for (the sandbox masks it anyway).
 */
function openQuietly(target: { abs: string; rel: string }): number | null {
  try {
    try {
      return openFileBeneath(target, "reading", constants.O_NOATIME ?? 0);
    } catch (err) {
      if (errnoCode(err) !== "EPERM") throw err;
      return openFileBeneath(target); // O_NOATIME refused (another user's file)
    }
  } catch (err) {
    if (
      err instanceof Refusal ||
      ["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "EPERM", "ENXIO"].includes(errnoCode(err) ?? "")
    )
      return null;
    throw err;
  }
}

function readText(fd: number): string {
  try {
    return readFileSync(fd, "utf8");
  } catch {
    return ""; // unreadable (EISDIR, EIO): nothing to look for
  }
}

function valuesOf(text: string, rel: string): Needle[] {
  const rule = `quarantined:${rel}`;
  const seen = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    if (seen.size >= MAX_PER_FILE) break;
    const t = line.trim();
    if (t === "" || t.startsWith("#") || t.startsWith("-----")) continue;
    const m = ASSIGNMENT.exec(t);
    const value = m ? m[1].replace(/^(["'])(.*)\1$/, "$2") : t.length >= 16 ? t : "";
    if (value.length >= MIN_KNOWN_LENGTH && !BORING.test(value)) seen.add(value);
  }
  return [...seen].map((v) => ({ rule, text: v }));
}
