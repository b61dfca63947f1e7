// A plain first start of `latch mcp`: `--root DIR` (and maybe `--state-dir DIR`), no config file, no
// skill folder, nothing in the environment that changes what latch offers. Every such start answers
// initialize and tools/list alike, but for the workspace named in the instructions, so the build
// computes those answers once (scripts/bundle.mjs: a start in a scratch folder under an empty HOME,
// its root's place marked) and the entry gives them, with this start's root, before the program loads
// (answer-cache.ts). The program then checks them against its own, as it checks kept answers.
// This file only decides whether a start is plain, from what decides the answers: the arguments, the
// variables below, the config file's place, the skill folders' places. What the program reads from
// the environment is listed here, each name as shaping the answers or not (a test holds every name
// src/ reads to this list).
import { lstatSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { defaultConfigPath } from "../../config/config-path.js";
import { mayHoldSkills, userSkillDir, WORKSPACE_SKILL_DIRS } from "../../skills/places.js";
import { mcpOptions } from "./mcp-args.js";

/** The build's answers for a plain start, beside program.cjs. */
export const PLAIN_FILE = "mcp-plain.json";
/** Where the root goes in the build's instructions. */
export const ROOT_MARK = "\u0000latch-root\u0000";

/** Set at all (even empty), and the start is not plain: each changes the config, the posture, the store or the tools. */
export const SHAPING_ENV = ["LATCH_CONFIG", "LATCH_DEFAULT_AUTHORIZATION", "LATCH_STATE_URL", "EXA_API_KEY"];
/** Read here to find the config file, the user's skill folder and the state dir, which are then checked. */
export const PLACE_ENV = ["HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "LATCH_STATE_DIR"];
/** Read by latch, but not by what it answers at initialize and tools/list. */
export const INERT_ENV = [
  "PATH",
  "GIT_CONFIG_GLOBAL", // these three: where the user's git reads its config (fs/git-config.ts), for what runs later
  "GIT_CONFIG_NOSYSTEM",
  "GIT_CONFIG_SYSTEM",
  "LATCH_APPROVAL_WAIT",
  "LATCH_BUILD_CODE_CACHE",
  "LATCH_GREP_ENGINE",
  "LATCH_LOG",
  "LATCH_RUN", // the mark latch gives its children (src/process/procs.ts), never read from its own environment
  "LATCH_SESSION",
  "LATCH_TOKEN",
  "NPM_CONFIG_REGISTRY",
  "npm_config_registry",
  "PIP_EXTRA_INDEX_URL",
  "PIP_INDEX_URL",
];

/** In a root's real path: a name byte that is not UTF-8 (names.ts escapes it, realpath gives U+FFFD). */
export const ODD_NAME = /[\uD800-\uDFFF\uFFFD]/;

/**
 * The canonical root of a plain start, else undefined (the program answers).
 */
export function plainRoot(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const given = rootArgument(args);
  if (given === undefined) return undefined;
  if (SHAPING_ENV.some((name) => name in env)) return undefined;
  try {
    if (lstatSync(defaultConfigPath(env), { throwIfNoEntry: false }) !== undefined) return undefined;
    const abs = path.resolve(cwd, given);
    if (!statSync(abs).isDirectory()) return undefined;
    // Not realpathOf: the entry's early answers load a dozen modules at most (test/cli/lazy-loads.test.ts),
    // and this is the user's own argument, resolved once per start.
    // eslint-disable-next-line no-restricted-syntax
    const root = realpathSync.native(abs);
    if (ODD_NAME.test(root)) return undefined;
    const user = userSkillDir(env);
    const places = [...(user ? [user] : []), ...WORKSPACE_SKILL_DIRS.map((d) => path.join(root, d))];
    return places.some(mayHoldSkills) ? undefined : root;
  } catch {
    return undefined; // a place that cannot be looked at: the program says what is wrong with it
  }
}

/** The instructions the build made, for this root. */
export function withRoot(instructions: string, root: string): string {
  return instructions.split(ROOT_MARK).join(root);
}

/** `mcp` then only `--root DIR` (once) and `--state-dir DIR` (at most once), as commander reads them (mcp-args.ts). */
function rootArgument(args: readonly string[]): string | undefined {
  const options = mcpOptions(args);
  if (!options) return undefined;
  const names = options.map((o) => o.name);
  const plain = names.every((n) => n === "--root" || n === "--state-dir") && names.length === new Set(names).size;
  const usable = options.every((o) => o.value && !o.value.startsWith("-"));
  return plain && usable ? options.find((o) => o.name === "--root")?.value : undefined;
}
