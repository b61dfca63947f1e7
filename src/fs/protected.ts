// What a file tool may never write, whatever the envelope says: a repository's own files. Inside a
// `.git` folder (hooks run code, config runs filters), a `.git` file (it points git elsewhere), or a
// folder that is a git directory under another name (where a `.git` file points: HEAD, objects/ and
// refs/ side by side); and under any `_protected_paths` glob (tools_policies.local_fs). Git is the
// tool for the repository.
import { statSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { errnoCode } from "../errors.js";
import { GLOB_OPTIONS } from "./glob.js";

/** Why a write to this canonical path must be refused, or undefined. `rel` is root-relative ("." for the root). */
export function protectedWriteTarget(
  root: string,
  abs: string,
  rel: string,
  protectedPaths: readonly string[],
): string | undefined {
  const segs = rel === "." ? [] : rel.split("/");
  const git = segs.findIndex((s) => s.toLowerCase() === ".git");
  if (git === segs.length - 1) return `\`${rel}\` is a .git entry (a repository's own folder or pointer file)`;
  if (git !== -1) return `\`${rel}\` is inside \`${segs.slice(0, git + 1).join("/")}\`, a repository's own folder`;
  // A git directory by another name: any folder from the root down to the target's parent.
  for (let i = segs.length - 1; i >= 0; i--) {
    const dir = path.join(root, ...segs.slice(0, i));
    if (isGitDir(dir))
      return `\`${rel}\` is inside \`${i === 0 ? "." : segs.slice(0, i).join("/")}\`, a git directory (HEAD, objects/, refs/)`;
  }
  for (const g of protectedPaths) {
    const test = picomatch(g, GLOB_OPTIONS);
    if ([abs, rel].some((p) => test(p) || test(p + "/x")))
      return `\`${rel}\` matches \`${g}\` in tools_policies.local_fs._protected_paths`;
  }
  return undefined;
}

function isGitDir(dir: string): boolean {
  try {
    return (
      statSync(path.join(dir, "HEAD")).isFile() &&
      statSync(path.join(dir, "objects")).isDirectory() &&
      statSync(path.join(dir, "refs")).isDirectory()
    );
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES") return false;
    throw err;
  }
}
