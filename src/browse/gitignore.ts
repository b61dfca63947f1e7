// Nested .gitignore files, applied as git does: the deepest file with a rule for a path decides, and
// a folder that is ignored is never entered (so nothing below it can be re-included).
import { closeSync, constants, lstatSync, openSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
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
 * undefined when it has none. Unreadable files count as absent; a link there is not followed (ELOOP).
 */
export async function loadLayer(file: string | Buffer, relDir: string): Promise<IgnoreLayer | undefined> {
  let text: string;
  try {
    text = await readFile(file, { encoding: "utf8", flag: READ_NOFOLLOW });
  } catch (err) {
    if (unreadable(err)) return undefined;
    throw err;
  }
  return layerOf(text, relDir);
}

/**
 * A .gitignore's text, read without the thread pool (for a walk that lists its folders synchronously:
 * four round trips there cost ~0.6 ms of waiting per file), named through a folder's descriptor;
 * undefined when it cannot be read (a link is not followed).
 */
export function readIgnoreText(file: string | Buffer): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, READ_NOFOLLOW);
  } catch (err) {
    if (unreadable(err)) return undefined;
    throw err;
  }
  try {
    return readFileSync(fd, "utf8");
  } catch (err) {
    if (unreadable(err)) return undefined;
    throw err;
  } finally {
    closeSync(fd);
  }
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
export function ancestorIgnores(root: string, relStart: string): { dir: string; text: string | undefined }[] {
  const found: { dir: string; text: string | undefined }[] = [];
  const parts = relStart === "." ? [] : relStart.split("/");
  if (parts.length === 0) return found;
  let dir: Folder | undefined;
  try {
    dir = openFolder(root, ".", { doing: "reading" });
    for (let i = 0; i < parts.length; i++) {
      if (lstatSync(dir.at(".gitignore"), { throwIfNoEntry: false }))
        found.push({ dir: dir.rel, text: readIgnoreText(dir.at(".gitignore")) });
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
