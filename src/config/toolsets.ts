// The keys each toolset accepts under [tools_policies.<toolset>], how their string values parse, and
// their defaults. Values are strings even when numeric (as in the seeds' policy carrier).
import { expected } from "../errors.js";
import { webSettings } from "../web/settings.js"; // a cycle: settings.ts uses this file's helpers, inside functions only
import type { ContainmentSetting } from "../sandbox/types.js";

/** Thrown for a bad value; the loader adds the file, line and full key. */
export class SettingError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export type RawPolicies = Record<string, Record<string, string>>;

function positiveInt(key: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw))) {
    throw new SettingError(key, expected(key, 'a positive whole number in a string, such as "1048576"', raw));
  }
  return Number(raw);
}

export function commaList(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export interface LocalFsSettings {
  /** Overrides the root for local_fs (relative to the root, or absolute). */
  allowedDir?: string;
  maxReadBytes: number;
  maxOutputBytes: number;
  deniedPathSubstrings: string[];
  /** Globs (root-relative or absolute) no write tool may change, on top of every `.git` (src/policy/protected.ts). */
  protectedPaths: string[];
  maxGrepMatches: number;
  maxFindResults: number;
}

export function localFsSettings(raw: Record<string, string> = {}): LocalFsSettings {
  return {
    allowedDir: raw._allowed_dir === undefined || raw._allowed_dir.trim() === "" ? undefined : raw._allowed_dir.trim(),
    maxReadBytes: positiveInt("_max_read_bytes", raw._max_read_bytes, 1024 * 1024),
    maxOutputBytes: positiveInt("_max_output_bytes", raw._max_output_bytes, 32 * 1024),
    deniedPathSubstrings: commaList(raw._denied_path_substrings),
    protectedPaths: commaList(raw._protected_paths),
    maxGrepMatches: positiveInt("_max_grep_matches", raw._max_grep_matches, 500),
    maxFindResults: positiveInt("_max_find_results", raw._max_find_results, 200),
  };
}

const CONTAINMENT: readonly ContainmentSetting[] = ["auto", "required", "off"];

/** `_containment`: is every process of the toolset run in the OS sandbox (src/sandbox)? Default "auto". */
function containmentSetting(raw: string | undefined): ContainmentSetting {
  if (raw === undefined) return "auto";
  const v = raw.trim() as ContainmentSetting;
  if (!CONTAINMENT.includes(v))
    throw new SettingError("_containment", expected("_containment", '"auto", "required" or "off"', raw));
  return v;
}

/** `_network`: may contained processes reach the network? "deny" (default) or "allow". */
function networkSetting(raw: string | undefined): boolean {
  if (raw === undefined || raw.trim() === "deny") return false;
  if (raw.trim() === "allow") return true;
  throw new SettingError("_network", expected("_network", '"deny" or "allow"', raw));
}

/** What the sandbox settings of a toolset say. */
export interface ContainmentSettings {
  containment: ContainmentSetting;
  network: boolean;
}

export interface LocalShellSettings extends ContainmentSettings {
  allowedCommands: string[];
  deniedCommands: string[];
  /** Programs and every cwd must lie under this folder (relative to the root, or absolute). */
  allowedDir?: string;
  /** Paths outside the root that arguments may name (relative to the root, or absolute). */
  allowedPaths: string[];
  /** Environment names to drop (globs with `*`, case-insensitive). */
  envDeny: string[];
  /** Environment names kept even when a deny pattern matches (globs too): DEFAULT_ENV_ALLOW plus `_env_allow`. */
  envAllow: string[];
  maxOutputBytes: number;
  timeoutMs: number;
  maxTimeoutMs: number;
  /** A policy is active when any of _allowed_commands, _denied_commands or _allowed_dir is set. */
  policyActive: boolean;
}

/** Names that look like secrets, dropped from a child's environment (globs with `*`, case-insensitive). */
export const DEFAULT_ENV_DENY = [
  "*KEY*",
  "*TOKEN*",
  "*SECRET*",
  "*PASS*",
  "*PAT*",
  "*CREDENTIAL*",
  "*AUTH*",
  "*PRIVATE*",
  "*COOKIE*",
  "*_DSN",
  "DATABASE_URL",
  "SSH_AUTH_SOCK",
  "GPG_AGENT_INFO",
  "KUBECONFIG",
  "AWS_*",
];

/** Names kept although a deny pattern matches them (search paths, git's author); `_env_allow` adds more. */
export const DEFAULT_ENV_ALLOW = [
  "PATH",
  "MANPATH",
  "INFOPATH",
  "GOPATH",
  "NODE_PATH",
  "PYTHONPATH",
  "CLASSPATH",
  "PKG_CONFIG_PATH",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
];

export function localShellSettings(raw: Record<string, string> = {}): LocalShellSettings {
  const allowedDir =
    raw._allowed_dir === undefined || raw._allowed_dir.trim() === "" ? undefined : raw._allowed_dir.trim();
  const timeoutMs = positiveInt("_timeout", raw._timeout, 60_000);
  const maxTimeoutMs = positiveInt("_max_timeout", raw._max_timeout, Math.max(600_000, timeoutMs));
  if (timeoutMs > maxTimeoutMs)
    throw new SettingError("_timeout", expected("_timeout", `at most _max_timeout (${maxTimeoutMs} ms)`, raw._timeout));
  return {
    allowedCommands: commaList(raw._allowed_commands),
    deniedCommands: commaList(raw._denied_commands),
    allowedDir,
    allowedPaths: commaList(raw._allowed_paths),
    envDeny: raw._env_deny === undefined ? DEFAULT_ENV_DENY : commaList(raw._env_deny),
    envAllow: [...DEFAULT_ENV_ALLOW, ...commaList(raw._env_allow)],
    maxOutputBytes: positiveInt("_max_output_bytes", raw._max_output_bytes, 64 * 1024),
    timeoutMs,
    maxTimeoutMs,
    policyActive: raw._allowed_commands !== undefined || raw._denied_commands !== undefined || allowedDir !== undefined,
    containment: containmentSetting(raw._containment),
    network: networkSetting(raw._network),
  };
}

export interface CatalogSettings extends ContainmentSettings {
  /** "*" for any program on the pinned PATH or in the root; a list of names; undefined when unset. */
  tools: "*" | string[] | undefined;
  maxStreamBytes: number;
  timeoutMs: number;
}

export function catalogSettings(raw: Record<string, string> = {}): CatalogSettings {
  const list = commaList(raw._tools);
  return {
    tools: list.length === 0 ? undefined : list.includes("*") ? "*" : list,
    maxStreamBytes: positiveInt("_max_stream_bytes", raw._max_stream_bytes, 64 * 1024),
    timeoutMs: positiveInt("_timeout", raw._timeout, 5_000),
    containment: containmentSetting(raw._containment),
    network: networkSetting(raw._network),
  };
}

export interface AstSettings {
  /** The time budget of one AST call, in milliseconds. */
  deadlineMs: number;
}

/** [tools_policies.ast]: `_ast_deadline` is "5s", "500ms", or a bare number of milliseconds (default 5 s). */
export function astSettings(raw: Record<string, string> = {}): AstSettings {
  const v = raw._ast_deadline;
  if (v === undefined) return { deadlineMs: 5_000 };
  const m = /^\s*([1-9][0-9]{0,8})\s*(ms|s)?\s*$/.exec(v);
  if (!m)
    throw new SettingError(
      "_ast_deadline",
      expected("_ast_deadline", 'a positive duration in a string, such as "5s" or "500ms"', v),
    );
  return { deadlineMs: Number(m[1]) * (m[2] === "s" ? 1000 : 1) };
}

/** Every toolset's accepted keys, with the parser that validates them. Unknown keys are errors. */
export const TOOLSET_KEYS: Record<string, { keys: string[]; parse: (raw: Record<string, string>) => unknown }> = {
  local_fs: {
    keys: [
      "_allowed_dir",
      "_max_read_bytes",
      "_max_output_bytes",
      "_denied_path_substrings",
      "_protected_paths",
      "_max_grep_matches",
      "_max_find_results",
    ],
    parse: localFsSettings,
  },
  ast: {
    keys: ["_ast_deadline"],
    parse: astSettings,
  },
  local_shell: {
    keys: [
      "_allowed_commands",
      "_denied_commands",
      "_allowed_dir",
      "_allowed_paths",
      "_env_deny",
      "_env_allow",
      "_max_output_bytes",
      "_timeout",
      "_max_timeout",
      "_containment",
      "_network",
    ],
    parse: localShellSettings,
  },
  catalog: {
    keys: ["_tools", "_max_stream_bytes", "_timeout", "_containment", "_network"],
    parse: catalogSettings,
  },
  web: {
    keys: [
      "_max_fetch_bytes",
      "_fetch_timeout",
      "_max_output_bytes",
      "_cache_bytes",
      "_cache_ttl",
      "_test_allow_addresses",
      "_search_base_url",
    ],
    parse: (raw) => webSettings(raw),
  },
  skills: {
    keys: ["_skill_dirs"],
    parse: (raw) => ({ skillDirs: commaList(raw._skill_dirs) }),
  },
};
