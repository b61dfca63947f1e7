// Nested .gitignore files, applied as git does: the deepest file with a rule for a path decides, and
// a folder that is ignored is never entered (so nothing below it can be re-included).
import { isUtf8 } from "node:buffer";
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from "node:fs";
import ignore, { type Ignore } from "ignore";
import { errnoCode, Refusal } from "../errors.js";
import { openChild, openFolder, type Folder } from "../fs/beneath.js";

export interface IgnoreLayer {
  /** Root-relative slash path of the folder that holds the .gitignore; "" for the root. */
  dir: string;
  /** The file's verdict on one path (relative to `dir`, a folder's with a trailing "/") alone. */
  test(sub: string): { ignored: boolean; unignored: boolean };
}

/**
 * The layer of one folder from its `.gitignore`, named through the folder's descriptor (Folder.at), or
 * undefined when it has none. Unreadable files count as absent (readIgnore).
 */
export async function loadLayer(file: string | Buffer, relDir: string): Promise<IgnoreLayer | undefined> {
  const { text } = readIgnore(file);
  return text === undefined ? undefined : layerOf(text, relDir);
}

/**
 * A .gitignore's text as latch takes it, named through a folder's descriptor, read without the thread
 * pool (a walk lists its folders synchronously: four round trips cost ~0.6 ms of waiting per file);
 * undefined when it cannot be read. A link is not followed, and a hard link's rules are not taken (it
 * may be a name for a file the rule hides). `odd`: ripgrep may read it otherwise (it follows a link,
 * reads a hard link, and stops at a line that is not UTF-8), so rg's answer in that tree cannot stand
 * for latch's (review g62, src/browse/steady-tree.ts).
 */
export function readIgnore(file: string | Buffer): { text: string | undefined; odd: boolean } {
  let fd: number;
  try {
    fd = openSync(file, READ_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ELOOP") return { text: undefined, odd: true };
    if (unreadable(err)) return { text: undefined, odd: false };
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return { text: undefined, odd: false }; // nobody reads a folder as rules
    if (!st.isFile() || st.nlink > 1) return { text: undefined, odd: true };
    const bytes = readFileSync(fd);
    // A BOM or a carriage return: read alike, probably, but nothing here says so.
    const odd = !isUtf8(bytes) || (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) || bytes.includes(13);
    return { text: bytes.toString("utf8"), odd };
  } catch (err) {
    if (unreadable(err)) return { text: undefined, odd: false };
    throw err;
  } finally {
    closeSync(fd);
  }
}

/** readIgnore's text alone. */
export function readIgnoreText(file: string | Buffer): string | undefined {
  return readIgnore(file).text;
}

function unreadable(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "ENOENT" || code === "ENOTDIR" || code === "EACCES" || code === "EISDIR" || code === "ELOOP";
}

/** The layer of folder `relDir` from its .gitignore's text. */
export function layerOf(text: string, relDir: string): IgnoreLayer {
  const rules = ignore({ allowRelativePaths: true, ignoreCase: false }).add(text);
  return { dir: relDir === "." ? "" : relDir, test: alone(rules) };
}

/**
 * A path's verdict from the file's rules alone, without the parents' verdicts that `Ignore.test`
 * folds in. A walk judges each folder before entering it, with every layer that applies there, and
 * enters only folders that are not ignored; `test` would judge a folder again with one layer, so a
 * folder that file ignores but a deeper one re-includes (`out/` at the root, `!out/` in `p/`) hid
 * everything in it, where git and rg show it. The package's rule set tests one path alone
 * (`_rules.test`, what its own `test` runs per parent); the public `test` is the fallback should a
 * version lack it (test/tools/find-index.test.ts holds the verdict).
 */
function alone(rules: Ignore): IgnoreLayer["test"] {
  const set = (rules as unknown as { _rules?: { test?: unknown } })._rules;
  if (typeof set?.test !== "function") return (sub) => rules.test(sub);
  const test = set.test as (path: string, mode: string) => { ignored: boolean; unignored: boolean };
  return (sub) => test.call(set, sub, "regex");
}

const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The .gitignore files of the root and of every folder between it and `relStart` (exclusive), each
 * folder opened through its parent by the walk by descriptors: the folder's rel ("." for the root)
 * and the file's text (undefined: there, but unreadable or not a file). A folder missing or swapped
 * for a link on the way ends the list there (the walk then refuses or skips that folder itself).
 */
export function ancestorIgnores(
  root: string,
  relStart: string,
): { dir: string; text: string | undefined; odd: boolean }[] {
  const found: { dir: string; text: string | undefined; odd: boolean }[] = [];
  const parts = relStart === "." ? [] : relStart.split("/");
  if (parts.length === 0) return found;
  let dir: Folder | undefined;
  try {
    dir = openFolder(root, ".", { doing: "reading" });
    for (let i = 0; i < parts.length; i++) {
      if (lstatSync(dir.at(".gitignore"), { throwIfNoEntry: false }))
        found.push({ dir: dir.rel, ...readIgnore(dir.at(".gitignore")) });
      if (i === parts.length - 1) break;
      const next = openChild(root, dir, parts[i]);
      dir.close();
      dir = next;
    }
  } catch (err) {
    if (!(err instanceof Refusal) && !["ENOENT", "ENOTDIR", "EACCES"].includes(errnoCode(err) ?? "")) throw err;
  } finally {
    dir?.close();
  }
  return found;
}

/** The layers of the root and of every folder between it and `relStart` (exclusive): ancestorIgnores' readable ones. */
export function loadAncestorLayers(root: string, relStart: string): IgnoreLayer[] {
  const layers: IgnoreLayer[] = [];
  for (const { dir, text } of ancestorIgnores(root, relStart)) if (text !== undefined) layers.push(layerOf(text, dir));
  return layers;
}

/** Whether a root-relative path is ignored by the layers that apply to it (deepest decides). */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i--) {
    const { dir } = layers[i];
    if (dir !== "" && !rel.startsWith(dir + "/")) continue;
    const sub = dir === "" ? rel : rel.slice(dir.length + 1);
    const r = layers[i].test(isDir ? sub + "/" : sub);
    if (r.ignored) return true;
    if (r.unignored) return false;
  }
  return false;
}

/**
 * Whether a folder lies in a gitignored folder (itself or an ancestor below the root). Walks never
 * enter one, so its contents are skipped even when the path names it; rg, which would search it,
 * is not asked.
 */
export async function isInsideIgnored(root: string, rel: string): Promise<boolean> {
  return rel !== "." && insideIgnored(loadAncestorLayers(root, rel), rel);
}

/** isInsideIgnored with the layers above `rel` already read (the walk of find-index.ts reads them once). */
export function insideIgnored(layers: readonly IgnoreLayer[], rel: string): boolean {
  if (rel === "." || layers.length === 0) return false;
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) {
    if (isIgnored(layers, parts.slice(0, i).join("/"), true)) return true;
  }
  return false;
}
