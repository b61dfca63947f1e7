// Globs for find_files and grep's include: a pattern without a slash matches the base name,
// one with a slash matches the path relative to the folder searched. Dotfiles match like others.
import picomatch from "picomatch";
import { GLOB_OPTIONS } from "../fs/glob.js";

export function makeGlob(pattern: string): (relPath: string) => boolean {
  const bare = pattern.replace(/^\.\//, "");
  const hasSlash = pattern.includes("/");
  const isMatch = picomatch(bare, GLOB_OPTIONS);
  const tail = literalTail(bare);
  // The end compared first: most names fail there, for the price of a string comparison.
  if (hasSlash) return (p) => p.endsWith(tail) && isMatch(p);
  return (p) => p.endsWith(tail) && isMatch(p.slice(p.lastIndexOf("/") + 1));
}

/**
 * The end every name the pattern matches must have: ".ts" of "*.ts", "" when there is none to be sure
 * of. Only letters, digits, ".", "_" and "-" after the pattern's last other character: anything else
 * may be glob syntax (picomatch also reads quotes, and `|` as an alternative, which ends no match
 * at the pattern's end); a pattern that starts with `!` matches what does NOT match the rest.
 */
export function literalTail(pattern: string): string {
  if (pattern.startsWith("!") || pattern.includes("|")) return "";
  return /[A-Za-z0-9._-]*$/.exec(pattern)![0];
}
