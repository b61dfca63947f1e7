import { z } from "zod";
import { ToolError } from "../errors.js";
import type { Skill, SkillIndex } from "../skills/discover.js";
import { readWindow, resolveSkillFile, skillFiles, skillHidden } from "../skills/files.js";
import type { ResolvedPath } from "../fs/paths.js";
import { defineTool } from "./define.js";

const schema = () =>
  z.strictObject({
    name: z.string().min(1).max(64).optional().describe("The skill's name. Omit it to list the skills."),
    path: z
      .string()
      .default("SKILL.md")
      .describe("A file inside the skill's folder, relative to it. Default: SKILL.md."),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Byte offset to read from: pass the next_offset of a previous page."),
  });

type Plan =
  | { paths: ResolvedPath[]; index: SkillIndex; skill?: undefined }
  | { paths: ResolvedPath[]; index: SkillIndex; skill: Skill; file: ResolvedPath };

/** At most this many skills are described in a listing, each description cut to DESCRIPTION_CHARS. */
const LISTED_SKILLS = 100;
const DESCRIPTION_CHARS = 300;

export default defineTool<z.output<ReturnType<typeof schema>>, Plan>({
  name: "skill",
  aliases: [],
  toolset: "skills",
  axis: "files.read",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Read a skill: instructions for a task, kept as a folder with a SKILL.md (in .agents/skills or .claude/skills of the workspace, or the user's skills).",
    "Call with no name to list the skills and their descriptions; with a name to read its SKILL.md (and see its other files); with a path to read one of those files.",
    "Only files inside the skill's own folder can be read. Long files come in pages: pass next_offset as offset.",
  ].join(" "),
  schema,
  async plan(args, env) {
    // discover.js (and yaml, for the front matter) loads at the first call, not at every start.
    const { discoverSkills } = await import("../skills/discover.js");
    const index = await discoverSkills(env);
    if (args.name === undefined) return { paths: [], index };
    const skill = index.skills.find((s) => s.name === args.name);
    if (!skill) {
      const known = index.skills.map((s) => s.name).join(", ") || "none";
      throw new ToolError(
        "ENOENT",
        `There is no skill named \`${args.name}\`; known: ${known}. Call skill with no name to list them.`,
      );
    }
    const file = resolveSkillFile(skill, args.path, env.root, skillHidden(env));
    return { paths: [file], index, skill, file };
  },
  async run(args, plan, env) {
    if (env.signal.aborted) throw new ToolError("ECANCELED", "The call was cancelled.");
    if (!plan.skill) return { result: listing(plan.index), display: { roots: plan.index.skills.map((s) => s.dir) } };
    const w = readWindow(plan.file.abs, args.offset, env.settings.local_fs.maxOutputBytes);
    const files = args.path === "SKILL.md" && args.offset === 0 ? skillFiles(plan.skill, skillHidden(env)) : undefined;
    return {
      result: {
        skill: plan.skill.name,
        path: args.path,
        content: w.content,
        bytes: w.size,
        truncated: w.next_offset !== undefined,
        ...(w.next_offset !== undefined ? { next_offset: w.next_offset } : {}),
        ...(files ? { files: files.files, ...(files.truncated ? { files_truncated: true } : {}) } : {}),
      },
      display: { dir: plan.skill.dir, source: plan.skill.source, file: plan.file.abs },
    };
  },
});

/** The model's view of the index: bounded, with the problems (file and line) so a broken skill can be fixed. */
function listing(index: SkillIndex) {
  const shown = index.skills.slice(0, LISTED_SKILLS);
  return {
    skills: shown.map((s) => ({ name: s.name, description: cut(s.description), source: s.source })),
    count: index.skills.length,
    truncated: index.truncated || shown.length < index.skills.length,
    ...(index.shadowed.length
      ? { shadowed: index.shadowed.slice(0, 20).map((x) => ({ name: x.name, dir: x.dir, reason: x.reason })) }
      : {}),
    ...(index.problems.length
      ? { problems: index.problems.slice(0, 20).map((p) => `${p.file}${p.line ? `:${p.line}` : ""}: ${p.message}`) }
      : {}),
  };
}

function cut(s: string): string {
  const flat = s.replace(/\s+/g, " ");
  return flat.length <= DESCRIPTION_CHARS ? flat : flat.slice(0, DESCRIPTION_CHARS - 1) + "…";
}
