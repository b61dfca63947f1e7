// Globs for find_files and grep's include: a pattern without a slash matches the base name,
// one with a slash matches the path relative to the folder searched. Dotfiles match like others.
import picomatch from "picomatch";
import { GLOB_OPTIONS } from "../fs/glob.js";

export function makeGlob(pattern: string): (relPath: string) => boolean {
  const hasSlash = pattern.includes("/");
  const isMatch = picomatch(pattern.replace(/^\.\//, ""), GLOB_OPTIONS);
  if (hasSlash) return (p) => isMatch(p);
  return (p) => isMatch(p.slice(p.lastIndexOf("/") + 1));
}
