// Skill discovery: a skill is a folder holding a SKILL.md whose YAML front matter has `name` and
// `description` (the Agent Skills layout). Roots, in order (the first skill of a name wins): the
// user's ~/.config/latch/skills (from the startup environment, never model input), `_skill_dirs` from
// the operator's config, then the workspace's <root>/.agents/skills and <root>/.claude/skills. A
// workspace skill named like a trusted one is left out and listed as shadowed, with the reason. A skill
// that cannot be read or parsed is reported with its file and line and left out; nothing here throws.
import { closeSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";
import { Refusal, errnoCode } from "../errors.js";
import type { SkillEnv } from "./files.js";
import { inControlPlane } from "../fs/paths.js";
import { skillHidden, skillPlane, trustedSkillDirs } from "./files.js";
import { WORKSPACE_SKILL_DIRS } from "./places.js";
import { realpathOf } from "../fs/realpath.js";

export interface Skill {
  name: string;
  description: string;
  /** The skill's folder, canonical. */
  dir: string;
  /** Where it was found: "workspace", "user" or "config". */
  source: SkillSource;
}

type SkillSource = "workspace" | "user" | "config";

interface SkillProblem {
  file: string;
  line: number;
  message: string;
}

export interface SkillIndex {
  skills: Skill[];
  problems: SkillProblem[];
  /** Workspace skills left out because a user or config skill has the same name (the trusted one wins). */
  shadowed: ShadowedSkill[];
  /** More skill folders than MAX_SKILLS were found; the rest were not read. */
  truncated: boolean;
}

interface ShadowedSkill {
  name: string;
  /** The workspace skill's folder. */
  dir: string;
  /** Why it is left out: the trusted skill that wins. */
  reason: string;
}

const MAX_SKILLS = 200;
/** Front matter must close within this many bytes of SKILL.md; the body may be any size (reads page). */
const FRONT_MATTER_BYTES = 64 * 1024;
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The skill roots that exist, canonical, in discovery order: the trusted ones first (the user's, then
 * the operator's), so a workspace skill never shadows one of theirs.
 */
async function skillRoots(env: SkillEnv): Promise<{ dir: string; source: SkillSource }[]> {
  const out: { dir: string; source: SkillSource }[] = [];
  for (const t of trustedSkillDirs(env)) addOutside(out, t.dir, t.source, env);
  for (const rel of WORKSPACE_SKILL_DIRS) {
    // The workspace's own skill folders pass the one resolver: denied substrings and the control plane apply.
    const r = await env.resolve(rel).catch((err: unknown) => {
      if (err instanceof Refusal || isMissing(err)) return undefined;
      throw err;
    });
    if (r?.exists && isDir(r.abs) && !out.some((o) => o.dir === r.abs)) out.push({ dir: r.abs, source: "workspace" });
  }
  return out;
}

function addOutside(out: { dir: string; source: SkillSource }[], dir: string, source: SkillSource, env: SkillEnv) {
  let real: string;
  try {
    real = realpathOf(dir);
  } catch (err) {
    if (isMissing(err)) return;
    throw err;
  }
  // A trusted skill folder is itself in the control plane (no tool may change it); any other part of
  // the control plane stays closed (a configured folder inside the state dir).
  if (!isDir(real) || inControlPlane(real, skillPlane(env)) || out.some((o) => o.dir === real)) return;
  out.push({ dir: real, source });
}

export async function discoverSkills(env: SkillEnv): Promise<SkillIndex> {
  const index: SkillIndex = { skills: [], problems: [], shadowed: [], truncated: false };
  let seen = 0;
  let parse: ParseDocument | undefined;
  const hidden = skillHidden(env);
  for (const root of await skillRoots(env)) {
    let names: string[];
    try {
      names = readdirSync(root.dir).sort();
    } catch (err) {
      index.problems.push({ file: root.dir, line: 0, message: `cannot be listed (${errnoCode(err) ?? String(err)})` });
      continue;
    }
    for (const entry of names) {
      if (entry.startsWith(".")) continue;
      const dir = path.join(root.dir, entry);
      const st = lstatOrUndefined(dir);
      if (!st) continue;
      if (st.isSymbolicLink()) {
        index.problems.push({ file: dir, line: 0, message: "is a link; a skill folder must be a real folder" });
        continue;
      }
      if (
        !st.isDirectory() ||
        hidden(dir, true) !== undefined ||
        hidden(path.join(dir, "SKILL.md"), false) !== undefined
      )
        continue;
      if (++seen > MAX_SKILLS) {
        index.truncated = true;
        return index;
      }
      // yaml is loaded at the first skill folder: a workspace without skills (most) never parses it.
      parse ??= (await import("./yaml.js")).parseDocument;
      const found = readSkill(dir, root.source, parse);
      if ("problem" in found) index.problems.push(found.problem);
      else if (index.skills.some((s) => s.name === found.skill.name)) {
        const first = index.skills.find((s) => s.name === found.skill.name)!;
        if (found.skill.source === "workspace" && first.source !== "workspace")
          index.shadowed.push({
            name: found.skill.name,
            dir: found.skill.dir,
            reason: `the ${first.source === "user" ? "user's" : "configured"} skill \`${first.name}\` (${first.dir}) has this name and wins: a workspace skill never replaces a trusted one`,
          });
        else
          index.problems.push({
            file: path.join(dir, "SKILL.md"),
            line: 1,
            message: `the name \`${found.skill.name}\` is taken by ${first.dir}, found first; this one is left out`,
          });
      } else index.skills.push(found.skill);
    }
  }
  return index;
}

type ParseDocument = (typeof import("./yaml.js"))["parseDocument"];

/** One skill folder: its SKILL.md's front matter, or the problem with it (file and line). */
function readSkill(
  dir: string,
  source: SkillSource,
  parseDocument: ParseDocument,
): { skill: Skill } | { problem: SkillProblem } {
  const file = path.join(dir, "SKILL.md");
  const problem = (line: number, message: string) => ({ problem: { file, line, message } });
  const st = lstatOrUndefined(file);
  if (!st) return problem(0, "no SKILL.md in this skill folder");
  if (!st.isFile()) return problem(0, "SKILL.md must be a regular file (not a link or a folder)");
  const head = readHead(file, FRONT_MATTER_BYTES);
  const text = head.toString("utf8");
  const lines = text.split("\n");
  if (lines[0].replace(/\r$/, "") !== "---")
    return problem(1, "SKILL.md must start with a `---` line (YAML front matter)");
  const end = lines.findIndex((l, i) => i > 0 && l.replace(/\r$/, "") === "---");
  if (end === -1)
    return problem(
      1,
      `the front matter is not closed by a \`---\` line within the first ${FRONT_MATTER_BYTES / 1024} KiB`,
    );
  const doc = parseDocument(lines.slice(1, end).join("\n"), { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    return problem((e.linePos?.[0].line ?? 1) + 1, `front matter is not valid YAML: ${e.message.split("\n")[0]}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    return problem(2, `front matter cannot be read: ${(err as Error).message}`); // alias bombs land here
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return problem(2, "front matter must be a mapping with `name` and `description`");
  const fm = data as Record<string, unknown>;
  const lineOf = (key: string) => 1 + Math.max(1, lines.slice(1, end).findIndex((l) => l.startsWith(key + ":")) + 1);
  if (typeof fm.name !== "string" || !NAME.test(fm.name) || fm.name.length > 64)
    return problem(
      lineOf("name"),
      `\`name\` must be lowercase letters, digits and single hyphens, at most 64 characters; got ${JSON.stringify(fm.name ?? null)}`,
    );
  if (typeof fm.description !== "string" || fm.description.trim() === "")
    return problem(lineOf("description"), "`description` must be a nonempty string");
  return { skill: { name: fm.name, description: fm.description.trim(), dir: realpathOf(dir), source } };
}

/** SKILL.md's first bytes, up to `max`: read a few KiB at a time and stop once the front matter has closed. */
function readHead(file: string, max: number): Buffer {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(max);
    let n = 0;
    while (n < max) {
      const got = readSync(fd, buf, n, Math.min(HEAD_CHUNK, max - n), n);
      if (got === 0) break;
      // Search from a little before the new bytes, so a closing line split across reads is found.
      const closed = CLOSING.test(buf.toString("latin1", Math.max(0, n - 8), n + got));
      n += got;
      if (closed) break;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

const HEAD_CHUNK = 4096;
/** A `---` line after the first one: the front matter's end (readSkill finds which line it is). */
const CLOSING = /\n---\r?\n/;

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch (err) {
    if (isMissing(err) || errnoCode(err) === "EACCES") return undefined;
    throw err;
  }
}

function isDir(p: string): boolean {
  return lstatOrUndefined(p)?.isDirectory() ?? false;
}

function isMissing(err: unknown): boolean {
  const c = errnoCode(err);
  return c === "ENOENT" || c === "ENOTDIR";
}
