// A first start in a new workspace, answered as the same start in another workspace was. A user with
// a config file starts `latch mcp --root DIR` alike in each project: the answers differ only by the
// workspace the instructions name, yet each first start paid the program's load before its first
// answer. So a start that keeps its answers also keeps them with its root's place marked (the
// instructions made for the mark, not found by text), under a key that names everything but the root:
// the arguments with the root's value marked, the folder it starts in (marked where it is the root),
// and the variables that shape the answers or name where they come from. What the answers came from is
// stamped as for kept answers, except the workspace: its own folder is only checked to be one, and the
// only places inside it are its own skill folders, kept as absent and checked so at the new root. A
// start whose answers may hang on its workspace beyond its name keeps none for elsewhere (below, and
// placesByRoot). The program checks these answers as it checks any the entry gave (answer-cache.ts).
// This file holds the pure parts: the root's argument, the key's material, the inputs with the root marked.
import path from "node:path";
import { WORKSPACE_SKILL_DIRS } from "../../skills/places.js";
import { mcpOptions } from "./mcp-args.js";
import { PLACE_ENV, ROOT_MARK, SHAPING_ENV } from "./plain-start.js";

/** The root's value among the arguments as commander reads them (mcp-args.ts): one `--root DIR` or `--root=DIR`. */
export function rootArgument(args: readonly string[]): { at: number; prefix: string; value: string } | undefined {
  const roots = mcpOptions(args)?.filter((o) => o.name === "--root") ?? [];
  if (roots.length !== 1) return undefined; // none, or twice: which one counts is the parser's to say
  const [{ at, prefix, value }] = roots;
  if (at === undefined || prefix === undefined || !value || value.startsWith("-")) return undefined;
  return { at, prefix, value };
}

/**
 * What a start is but for its root (canonical, `root`): undefined when the root is `/` (every path is
 * inside it), not in the arguments, named by another argument too, or, for a start in the root, when a
 * relative path among the arguments or the variables below leads out of it. The arguments' root value, the
 * folder and the variables below are marked where they are the root (resolved, or canonical).
 */
export function elsewhereMaterial(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  root: string,
): unknown[] | undefined {
  const given = rootArgument(args);
  if (!given || path.dirname(root) === root) return undefined;
  const abs = path.resolve(cwd, given.value);
  const isRoot = (v: string | undefined) => v === root || v === abs;
  // Another argument that names the workspace (a state dir or a config in it): a start of this one only.
  if (args.some((a, i) => i !== given.at && (a.includes(root) || a.includes(abs)))) return undefined;
  const names = [...SHAPING_ENV, ...PLACE_ENV];
  // Started in the root, a relative path resolves there: out of it (`--config ../c.toml`,
  // XDG_CONFIG_HOME=../cfg) it is another file in another workspace, which no stamp here would see.
  // Into it is a place inside the workspace, which markedInputs looks at.
  if (isRoot(cwd)) {
    // Each value whole, and an option's after its `=` (a path may hold a `=` too).
    const values = [
      ...args.slice(1).flatMap((a, i) => (i + 1 === given.at ? [] : [a, ...optionValue(a)])),
      ...names.flatMap((k) => (env[k] === undefined ? [] : [env[k]])),
    ];
    if (values.some((v) => leavesRoot(v, root))) return undefined;
  }
  const marked = [...args];
  marked[given.at] = given.prefix + ROOT_MARK;
  // Only the variables that shape the answers or name a place they come from (plain-start.ts, where a
  // test holds every name src/ reads to the lists): a shell's PWD and OLDPWD differ from project to project.
  const vars = names.map((k) => [k, isRoot(env[k]) ? ROOT_MARK : (env[k] ?? null)]);
  return ["elsewhere", marked, isRoot(cwd) ? ROOT_MARK : cwd, vars];
}

/** `--flag=value`'s value. */
function optionValue(arg: string): string[] {
  const eq = arg.indexOf("=");
  return arg.startsWith("--") && eq > 0 ? [arg.slice(eq + 1)] : [];
}

/** A relative path that, from the root, leads out of it. */
function leavesRoot(value: string, root: string): boolean {
  if (value === "" || path.isAbsolute(value)) return false;
  const rel = path.relative(root, path.resolve(root, value));
  return rel === ".." || rel.startsWith(".." + path.sep);
}

/**
 * Settings that place something by the root beyond its name, so that another workspace's answers are
 * not these with another name: an allowed dir (it names the folder the tools work in, or a fixed one
 * another workspace would not have), a skill folder given relative to the root.
 */
export function placesByRoot(settings: {
  local_fs: { allowedDir?: string };
  skills: { skillDirs: readonly string[] };
}): boolean {
  return settings.local_fs.allowedDir !== undefined || settings.skills.skillDirs.some((d) => !path.isAbsolute(d));
}

/** An input as a kept answers file lists it: its path, how it is stamped, its stamp. */
export type KeptInput = [string, "content" | "identity" | "text", string];

/**
 * The inputs with the root's place marked, or undefined when the answers may hang on the workspace
 * beyond its name: any place inside it but the workspace's own skill folders, and those only while
 * absent (a config file or a folder a setting names there, which another workspace's start would not
 * look for in its own root, there or not). The root itself (canonical, and `given` as resolved) drops
 * out: another workspace is another folder.
 */
export function markedInputs(inputs: readonly KeptInput[], root: string, given: string): KeptInput[] | undefined {
  const out: KeptInput[] = [];
  for (const [p, by, stamp] of inputs) {
    if (!path.isAbsolute(p)) return undefined; // read from the folder a start is in: no place to reason about
    if (p === root || p === given) continue;
    const inside = [root, given].find((r) => p.startsWith(r + path.sep));
    if (inside === undefined) out.push([p, by, stamp]);
    else if (stamp === "absent" && (WORKSPACE_SKILL_DIRS as readonly string[]).includes(p.slice(inside.length + 1)))
      out.push([ROOT_MARK + p.slice(inside.length), by, stamp]);
    else return undefined;
  }
  return out;
}
