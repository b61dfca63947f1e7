// Nested .gitignore files, applied as git does: the deepest file with a rule for a path decides, and
// a folder that is ignored is never entered (so nothing below it can be re-included).
import { readFile } from "node:fs/promises";
import { osPath } from "../fs/names.js";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { errnoCode } from "../errors.js";

export interface IgnoreLayer {
  /** Root-relative slash path of the folder that holds the .gitignore; "" for the root. */
  dir: string;
  rules: Ignore;
}

/** The layer of one folder, or undefined when it has no .gitignore. Unreadable files count as absent. */
export async function loadLayer(absDir: string, relDir: string): Promise<IgnoreLayer | undefined> {
  let text: string;
  try {
    text = await readFile(osPath(path.join(absDir, ".gitignore")), "utf8");
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES" || code === "EISDIR") return undefined;
    throw err;
  }
  return {
    dir: relDir === "." ? "" : relDir,
    rules: ignore({ allowRelativePaths: true, ignoreCase: false }).add(text),
  };
}

/** The layers of the root and of every folder between it and `relStart` (exclusive). */
export async function loadAncestorLayers(root: string, relStart: string): Promise<IgnoreLayer[]> {
  const layers: IgnoreLayer[] = [];
  const parts = relStart === "." ? [] : relStart.split("/");
  for (let i = 0; i < parts.length; i++) {
    const rel = parts.slice(0, i).join("/");
    const layer = await loadLayer(path.join(root, ...parts.slice(0, i)), rel === "" ? "." : rel);
    if (layer) layers.push(layer);
  }
  return layers;
}

/** Whether a root-relative path is ignored by the layers that apply to it (deepest decides). */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i--) {
    const { dir, rules } = layers[i];
    if (dir !== "" && !rel.startsWith(dir + "/")) continue;
    const sub = dir === "" ? rel : rel.slice(dir.length + 1);
    const r = rules.test(isDir ? sub + "/" : sub);
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
  if (rel === ".") return false;
  const layers = await loadAncestorLayers(root, rel);
  if (layers.length === 0) return false;
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) {
    if (isIgnored(layers, parts.slice(0, i).join("/"), true)) return true;
  }
  return false;
}
