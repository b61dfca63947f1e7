// What the skill tool may read: SKILL.md or a file contained in that skill's own folder, nothing else.
// A path is refused when it is absolute, has a `..` segment or a NUL, or resolves (links followed)
// outside the skill's folder; latch's control plane and the credential quarantine stay closed.
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { quarantineGlob } from "../fs/quarantine.js";
import type { Settings } from "../config/settings.js";
import type { Visibility } from "../policy/visibility.js";
import { inControlPlane, isInside, toRel, type ResolvedPath } from "../fs/paths.js";
import type { Skill } from "./discover.js";
import { mayHoldSkills, userSkillDir, WORKSPACE_SKILL_DIRS } from "./places.js";
import { realpathOf } from "../fs/realpath.js";

/** What finding and reading skills needs of a tool's environment (a tool's `ToolEnv` has all of it). */
export interface SkillEnv {
  root: string;
  resolve(input: string): Promise<ResolvedPath>;
  settings: Pick<Settings, "skills">;
  startupEnv: Readonly<NodeJS.ProcessEnv>;
  controlPlane: readonly string[];
  visibility: Visibility;
}

/** The canonical file `input` names inside the skill's folder, as a ResolvedPath for the envelope. */
export function resolveSkillFile(
  skill: Skill,
  input: string,
  root: string,
  hidden: (abs: string, isDir: boolean) => string | undefined,
): ResolvedPath {
  const hint = "Name a file inside the skill's folder by its relative path, such as `SKILL.md` or `reference/api.md`.";
  if (input === "" || input.includes("\0"))
    throw new Refusal("The skill file path is empty or holds a NUL byte.", hint);
  if (path.isAbsolute(input) || input.startsWith("~"))
    throw new Refusal(
      `\`${input}\` is an absolute path; the skill tool reads only files inside the skill's folder.`,
      hint,
    );
  if (input.split(/[/\\]/).includes(".."))
    throw new Refusal(
      `\`${input}\` climbs out with \`..\`; the skill tool reads only files inside the skill's folder.`,
      hint,
    );
  const joined = path.join(skill.dir, input);
  let real: string;
  try {
    real = realpathOf(joined);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new ToolError("ENOENT", `The skill \`${skill.name}\` has no file \`${input}\`. ${hint}`);
    if (code === "ELOOP") throw new Refusal(`\`${input}\` is a link loop.`, hint);
    throw err;
  }
  if (!isInside(skill.dir, real))
    throw new Refusal(
      `\`${input}\` leads out of the skill's folder (through a link); the skill tool reads only files inside it.`,
      hint,
    );
  const q = quarantineGlob(real);
  if (q !== undefined) throw new Refusal(`\`${input}\` is under the credential quarantine (${q}).`, hint);
  const why = hidden(real, false);
  if (why !== undefined) throw new Refusal(`\`${input}\` is hidden from latch's tools (${why}).`, hint);
  return { input, abs: real, rel: isInside(root, real) ? toRel(root, real) : real, exists: true };
}

export interface Window {
  content: string;
  size: number;
  /** Where the next page starts, when the file goes on. */
  next_offset?: number;
}

/** `max` bytes of a text file from byte `offset`, cut back to a whole UTF-8 character. */
export function readWindow(abs: string, offset: number, max: number): Window {
  const fd = openSync(abs, "r");
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ToolError("EISDIR", "That path is a folder, not a file; name a file in the skill.");
    const buf = Buffer.alloc(Math.min(max, Math.max(0, st.size - offset)));
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, offset + n);
      if (got === 0) break;
      n += got;
    }
    // An offset inside a character (not one this tool gave) starts at the next whole character.
    let skip = 0;
    while (offset > 0 && skip < 3 && skip < n && (buf[skip] & 0xc0) === 0x80) skip++;
    let bytes = buf.subarray(skip, n);
    if (bytes.includes(0))
      throw new ToolError("EBINARY", "That skill file is binary (it holds NUL bytes); only text is read.");
    if (offset + n < st.size) bytes = bytes.subarray(0, utf8Boundary(bytes));
    const end = offset + skip + bytes.length;
    return { content: bytes.toString("utf8"), size: st.size, ...(end < st.size ? { next_offset: end } : {}) };
  } finally {
    closeSync(fd);
  }
}

/** The length of the longest prefix of `b` that does not end inside a UTF-8 character. */
function utf8Boundary(b: Buffer): number {
  let i = b.length;
  let back = 0;
  while (i > 0 && back < 4 && (b[i - 1] & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i === 0) return b.length;
  const lead = b[i - 1];
  if (lead < 0xc0) return back === 0 ? b.length : i; // ASCII last, or stray continuation bytes: keep what is whole
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need === back + 1 ? b.length : i - 1;
}

const MAX_LISTED_FILES = 100;

/** The files of a skill's folder (links, dotfiles and hidden entries left out), for the model to ask for. */
export function skillFiles(
  skill: Skill,
  hidden: (abs: string, isDir: boolean) => string | undefined,
): { files: string[]; truncated: boolean } {
  const files: string[] = [];
  const walk = (rel: string, depth: number): boolean => {
    let names: string[];
    try {
      names = readdirSync(path.join(skill.dir, rel)).sort();
    } catch {
      return true; // a folder that cannot be listed is left out of this courtesy listing; reads still check
    }
    for (const n of names) {
      if (n.startsWith(".")) continue;
      const r = rel ? `${rel}/${n}` : n;
      const abs = path.join(skill.dir, r);
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st || st.isSymbolicLink() || hidden(abs, st.isDirectory()) !== undefined) continue;
      if (st.isDirectory()) {
        if (depth < 4 && !walk(r, depth + 1)) return false;
      } else if (st.isFile() && r !== "SKILL.md") {
        if (files.length >= MAX_LISTED_FILES) return false;
        files.push(r);
      }
    }
    return true;
  };
  const complete = walk("", 0);
  return { files, truncated: !complete };
}

/**
 * The user's and the operator's skill folders (not the workspace's own), absolute, not yet canonical:
 * ~/.config/latch/skills (from the startup environment, never model input) and `_skill_dirs` (relative
 * ones from the root). They are latch's control plane (host/create-host.ts): no tool may change them.
 */
export function trustedSkillDirs(
  env: Pick<SkillEnv, "root" | "settings" | "startupEnv">,
): { dir: string; source: "user" | "config" }[] {
  const out: { dir: string; source: "user" | "config" }[] = [];
  const user = userSkillDir(env.startupEnv);
  if (user) out.push({ dir: user, source: "user" });
  for (const d of env.settings.skills.skillDirs) out.push({ dir: path.resolve(env.root, d), source: "config" });
  return out;
}

/** Every folder a skill may be found in: the trusted ones (settings, the user's) and the workspace's. */
export function skillFolderPlaces(env: Pick<SkillEnv, "root" | "settings" | "startupEnv">): string[] {
  return [...trustedSkillDirs(env).map((t) => t.dir), ...WORKSPACE_SKILL_DIRS.map((d) => path.join(env.root, d))];
}

/**
 * Whether any folder discovery looks in exists (the trusted ones, the workspace's own): when none does,
 * the index is empty, known without a skill call. A stat each; any doubt (an error but a missing path)
 * answers true, and the caller discovers as usual.
 */
export function anySkillFolder(env: Pick<SkillEnv, "root" | "settings" | "startupEnv">): boolean {
  return skillFolderPlaces(env).some(mayHoldSkills);
}

/** The control plane as the skill code reads it: without the trusted skill folders, which it reads. */
export function skillPlane(env: SkillEnv): string[] {
  const trusted = trustedSkillDirs(env).map((t) => realOrSelf(t.dir));
  return env.controlPlane.filter((c) => !trusted.includes(c));
}

function realOrSelf(p: string): string {
  try {
    return realpathOf(p);
  } catch {
    return p; // missing: the control plane holds its canonical form, which is this path for a missing tail
  }
}

/**
 * The visibility rule for skill entries: inside the workspace, the one rule every walk uses
 * (src/policy/visibility.ts); inside a trusted skill folder or outside the workspace, the control plane
 * (but the trusted skill folders themselves) and the credential quarantine. The envelope's path rules
 * also judge each read by its plan.
 */
export function skillHidden(env: SkillEnv): (abs: string, isDir: boolean) => string | undefined {
  const plane = skillPlane(env);
  const trusted = env.controlPlane.filter((c) => !plane.includes(c));
  return (abs, isDir) => {
    if (isInside(env.root, abs) && !trusted.some((t) => isInside(t, abs)))
      return env.visibility.hides(toRel(env.root, abs), isDir);
    if (inControlPlane(abs, plane)) return "latch's control plane";
    return quarantineGlob(abs) === undefined ? undefined : "the credential quarantine";
  };
}
