// Where list_dir's page at an offset starts, remembered from an earlier walk of the same folder. A
// page by offset must count every entry before it, one verdict each (the visibility rule, .gitignore,
// the resolver for folders): a page far into a big folder cost 3× the first. A page by cursor skips
// to its entry by binary search and costs the same anywhere; so a walk that passed entries records
// each one's path (and the hidden and ignored counts so far), and a later offset page of the same
// folder starts as a cursor page at the entry before it.
// Only a flat listing (not recursive) is indexed, and only while the folder is provably unchanged:
// its device, inode, mtime and ctime in nanoseconds, and every .gitignore from the root down to it
// (which decide what is counted), looked up through descriptors. A folder changed within RACY_MS of
// the walk is not indexed (a change in the same clock tick keeps the mtime). The key holds the
// visibility rule as rg's exclusions (every part of it: quarantine, control plane, denied substrings,
// the envelope's globs), so a listing under another rule is never reused. Bounded: MAX_FOLDERS
// folders, each up to MAX_ENTRIES.
import { fstatSync, lstatSync } from "node:fs";
import { errnoCode, Refusal } from "../errors.js";
import { openChild, openFolder, type Folder } from "../fs/beneath.js";

const RACY_MS = 1000;
const MAX_FOLDERS = 8;
const MAX_ENTRIES = 1_000_000;

export interface PassedEntry {
  rel: string;
  /** Counts after this entry was passed. */
  hidden: number;
  ignored: number;
}

interface Index {
  stamp: string;
  passed: PassedEntry[];
}

/** Folder and rule (indexKey) → what a walk passed; the most recently kept last. */
const indexes = new Map<string, Index>();

/** The key of a folder listed under a visibility rule, or undefined when the rule cannot be written down. */
export function indexKey(root: string, rel: string, rule: { rgExcludes(startRel: string): string[] | undefined }) {
  const excludes = rule.rgExcludes(rel);
  return excludes === undefined ? undefined : JSON.stringify([root, rel, excludes]);
}

/**
 * The folder's identity and what decides its listing, or undefined when it cannot be trusted (changed
 * just now, missing, or a folder on the way is a link).
 */
export function folderStamp(root: string, rel: string): string | undefined {
  const parts = rel === "." ? [] : rel.split("/");
  let dir: Folder | undefined;
  const out: string[] = [];
  try {
    dir = openFolder(root, ".", { doing: "reading" });
    for (let i = 0; ; i++) {
      const ig = lstatSync(dir.at(".gitignore"), { throwIfNoEntry: false, bigint: true });
      out.push(ig ? `${ig.ino}:${ig.mtimeNs}:${ig.ctimeNs}:${ig.size}` : "-");
      if (i === parts.length) break;
      const next = openChild(root, dir, parts[i]);
      dir.close();
      dir = next;
    }
    const st = fstatSync(dir.fd, { bigint: true });
    if (
      Date.now() - Number(st.mtimeNs / 1_000_000n) < RACY_MS ||
      Date.now() - Number(st.ctimeNs / 1_000_000n) < RACY_MS
    )
      return undefined;
    out.push(`${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`);
    return out.join("|");
  } catch (err) {
    if (err instanceof Refusal || ["ENOENT", "ENOTDIR", "EACCES"].includes(errnoCode(err) ?? "")) return undefined;
    throw err;
  } finally {
    dir?.close();
  }
}

/** The entry before `offset` and the counts there, when a walk of this unchanged folder passed it. */
export function indexedStart(key: string, stamp: string | undefined, offset: number): PassedEntry | undefined {
  if (stamp === undefined || offset === 0) return undefined;
  const ix = indexes.get(key);
  if (!ix || ix.stamp !== stamp) return undefined;
  return ix.passed[offset - 1];
}

/** Keep what a walk passed, if it passed more than is kept already for the same folder as it is. */
export function keepIndex(key: string, stamp: string | undefined, passed: PassedEntry[]): void {
  if (stamp === undefined || passed.length === 0 || passed.length > MAX_ENTRIES) return;
  const m = indexes;
  const had = m.get(key);
  if (had && had.stamp === stamp && had.passed.length >= passed.length) return;
  m.delete(key);
  m.set(key, { stamp, passed });
  if (m.size > MAX_FOLDERS) m.delete(m.keys().next().value!);
}
