// What a file tool may never write, whatever the envelope says: a repository's own files. Inside a
// `.git` folder (hooks run code, config runs filters), a `.git` file (it points git elsewhere), or a
// folder that is a git directory under another name (where a `.git` file points: HEAD, objects/ and
// refs/ side by side), or a write that would make a folder one; and under any `_protected_paths` glob
// (tools_policies.local_fs). Git is the tool for the repository.
import { lstatSync, statSync } from "node:fs";
import path from "node:path";
import { errnoCode, Refusal } from "../errors.js";
import { envelopeGlob, escapeRegex } from "./glob.js";

/**
 * Why a write is refused: `lookalike` when the reason is a folder git takes for a repository by the
 * names it holds, which may be only source that looks like one (a tutorial's, a test fixture's).
 */
export interface Protected {
  why: string;
  lookalike?: true;
}

/** Why a write to this canonical path must be refused, or undefined. `rel` is root-relative ("." for the root). */
export function protectedWriteTarget(
  root: string,
  abs: string,
  rel: string,
  protectedPaths: readonly string[],
): Protected | undefined {
  const segs = rel === "." ? [] : rel.split("/");
  const git = segs.findIndex((s) => s.toLowerCase() === ".git");
  if (git === segs.length - 1) return { why: `\`${rel}\` is a .git entry (a repository's own folder or pointer file)` };
  if (git !== -1)
    return { why: `\`${rel}\` is inside \`${segs.slice(0, git + 1).join("/")}\`, a repository's own folder` };
  // A git directory by another name: any folder from the root down to the target's parent.
  for (let i = segs.length - 1; i >= 0; i--) {
    const dir = path.join(root, ...segs.slice(0, i));
    if (isGitDirLike((n) => markAt(dir, n)))
      return {
        why: `\`${rel}\` is inside \`${i === 0 ? "." : segs.slice(0, i).join("/")}\`, a git directory (HEAD beside objects/ and refs/, or commondir)`,
        lookalike: true,
      };
  }
  // Nor one made by this write: each mark git looks for could be written alone, the last one making
  // the folder a repository whose config the user's next git there runs (review g1: src/config with
  // core.fsmonitor, src/HEAD, src/objects/, src/refs/, four write_file calls no one was asked about).
  const made = gitDirMadeBy(root, [rel]);
  if (made !== undefined) return made;
  for (const glob of protectedPaths) {
    const test = envelopeGlob(glob); // compiled once per glob
    if (test(abs) || test(rel))
      return { why: `\`${rel}\` matches \`${glob}\` in tools_policies.local_fs._protected_paths` };
  }
  return undefined;
}

/** The refusal of a write protectedWriteTarget or gitDirMadeBy gave a reason for. */
export function protectedRefusal(p: Protected): Refusal {
  return new Refusal(
    `${p.why}; latch's file tools do not write there.`,
    p.lookalike
      ? // Review g6: a git-internals tutorial's own source (HEAD, objects/, refs/) met a hint about repositories.
        "Git takes a folder holding those names for a repository and would run its config, so latch keeps it as one. If it is a repository, change it with git (local_shell); if it is files that only look like one, ask the user to write them or to rename one of those names. Do not retry this path."
      : "Change the repository with git (local_shell), not with file edits; do not retry this path.",
  );
}

/**
 * Why writing all of `rels` (root-relative paths, as one call writes them: apply_patch adds several)
 * would make a folder a git directory, or undefined: each folder that one of them makes a mark in,
 * with the marks it holds and the marks the others make there.
 */
export function gitDirMadeBy(root: string, rels: readonly string[]): Protected | undefined {
  const making = new Map<string, Set<string>>(); // folder (root-relative, "" for the root) -> marks made
  for (const rel of rels) {
    const segs = rel === "." ? [] : rel.split("/");
    for (let i = 0; i < segs.length; i++) {
      if (!GIT_DIR_MARKS.includes(segs[i]) || (isFileMark(segs[i]) && i !== segs.length - 1)) continue;
      const dir = segs.slice(0, i).join("/");
      making.set(dir, (making.get(dir) ?? new Set()).add(segs[i]));
    }
  }
  for (const [dir, marks] of making) {
    const abs = path.join(root, dir);
    if (isGitDirLike((n) => marks.has(n) || markAt(abs, n)))
      return {
        why: `writing ${rels.length === 1 ? `\`${rels[0]}\`` : `these files`} would make \`${dir || "."}\` a git directory (HEAD beside objects/ and refs/, or commondir), whose config git would run`,
        lookalike: true,
      };
  }
  return undefined;
}

/** No error made for the usual folder, one without HEAD: a thrown ENOENT cost each folder ~10 µs. */
const no = { throwIfNoEntry: false } as const;

/**
 * The names that make a folder a git directory to git (setup.c, is_git_directory): a HEAD (a file or
 * a link: git takes a dangling `HEAD -> refs/heads/x`) with `objects` and `refs`, or with a `commondir`
 * file naming where those are. The sandbox's walk (secrets.ts) looks for the same.
 */
export const GIT_DIR_MARKS: readonly string[] = ["HEAD", "commondir", "objects", "refs"];

/** HEAD and commondir count when they are not folders; objects and refs as anything (git only checks access). */
export const isFileMark = (name: string) => name === "HEAD" || name === "commondir";

/** Whether a folder with these marks (`has`: by name, GIT_DIR_MARKS) is a git directory to git. */
export function isGitDirLike(has: (name: string) => boolean): boolean {
  return has("HEAD") && (has("commondir") || (has("objects") && has("refs")));
}

/** Whether `dir` holds `name` as the mark git looks for (EACCES: it cannot be read there, so not). */
function markAt(dir: string, name: string): boolean {
  try {
    const st = isFileMark(name) ? lstatSync(path.join(dir, name), no) : statSync(path.join(dir, name), no);
    return st !== undefined && !(isFileMark(name) && st.isDirectory());
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
