// What a file tool may never write, whatever the envelope says: a repository's own files. Inside a
// `.git` folder (hooks run code, config runs filters), a `.git` file (it points git elsewhere), or a
// folder that is a git directory under another name (where a `.git` file points: HEAD, objects/ and
// refs/ side by side); and under any `_protected_paths` glob (tools_policies.local_fs). Git is the
// tool for the repository.
import { statSync } from "node:fs";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { envelopeGlob, escapeRegex } from "./glob.js";

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
  for (const glob of protectedPaths) {
    const test = envelopeGlob(glob); // compiled once per glob
    if (test(abs) || test(rel)) return `\`${rel}\` matches \`${glob}\` in tools_policies.local_fs._protected_paths`;
  }
  return undefined;
}

/** No error made for the usual folder, one without HEAD: a thrown ENOENT cost each folder ~10 µs. */
const no = { throwIfNoEntry: false } as const;

function isGitDir(dir: string): boolean {
  try {
    return (
      statSync(path.join(dir, "HEAD"), no)?.isFile() === true &&
      statSync(path.join(dir, "objects"), no)?.isDirectory() === true &&
      statSync(path.join(dir, "refs"), no)?.isDirectory() === true
    );
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EACCES") return false;
    throw err;
  }
}

/**
 * Files other programs run later, outside latch and its sandbox: editor tasks and settings, direnv,
 * git hooks (husky's and git's own), dev containers, agent settings and MCP servers, shell rc files.
 * Paths relative to a folder (the workspace root, or any folder under it: a nested project is opened
 * too); the file tools ask before writing there (runsLaterGlob, policy/envelope-eval.ts), the sandbox
 * keeps them read-only.
 */
export const RUNS_LATER: readonly string[] = [
  ".vscode",
  ".idea",
  ".envrc",
  ".husky",
  ".devcontainer",
  ".claude",
  ".mcp.json",
  ".git/hooks",
  ".gitconfig",
  ".gitmodules",
  ".ripgreprc",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".zlogout",
];

/** RUNS_LATER as globs over absolute paths: each name anywhere, and everything under it. */
const RUNS_LATER_GLOBS: readonly string[] = RUNS_LATER.map((p) => `**/${p}/**`);

const runsLater = RUNS_LATER_GLOBS.map((glob) => ({ glob, test: envelopeGlob(glob) }));
/**
 * Whether any entry is a run of whole segments of the path, case aside: what every glob above needs
 * to match, in one regex. Most written paths hold none, and skip the 42 tests (~6 µs a write).
 */
const mayRunLater = new RegExp(`(?:^|/)(?:${RUNS_LATER.map(escapeRegex).join("|")})(?:/|$)`, "i");

/** The RUNS_LATER entry an absolute path is or lies under, or undefined. */
export function runsLaterGlob(abs: string): string | undefined {
  if (!mayRunLater.test(abs)) return undefined;
  return runsLater.find((r) => r.test(abs))?.glob;
}
