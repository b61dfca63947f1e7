// The keys each toolset accepts under [tools_policies.<toolset>], one zod schema per toolset: its
// table says which string values are valid (agents.toml is checked with it, errors naming file, line
// and key: load.ts); its transform says what they mean as typed values (a host parses its settings
// once with it: settings.ts). Values are strings even when numeric (as in the seeds' policy carrier).
import { z } from "zod";
import { expected } from "../errors.js";
import type { ContainmentSetting, ContainmentSettings, ProxiedNetwork } from "../sandbox/types.js";

export type RawPolicies = Record<string, Record<string, string>>;

/** A table of these keys only: an unknown key is an error that lists the accepted ones. */
export function table<S extends Record<string, z.ZodType>>(shape: S) {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === "unrecognized_keys" ? `accepted: ${Object.keys(shape).join(", ")}` : undefined),
  });
}

/** A value with a check; the message says what `key` expects and what it got. */
function checked(key: string, what: string, ok: (v: string) => boolean) {
  return z
    .string()
    .refine(ok, { error: (iss) => expected(key, what, iss.input) })
    .optional();
}

const text = z.string().optional();

const WHOLE = /^\s*[1-9][0-9]*\s*$/;
export const positiveInt = (key: string) =>
  checked(
    key,
    'a positive whole number in a string, such as "1048576"',
    (v) => WHOLE.test(v) && Number.isSafeInteger(Number(v)),
  );

/** A checked positive whole number, or the default. */
export function num(raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : Number(raw);
}

export function commaList(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** A folder setting: undefined when unset or blank. */
function folder(raw: string | undefined): string | undefined {
  return raw === undefined || raw.trim() === "" ? undefined : raw.trim();
}

export interface LocalFsSettings {
  /** Overrides the root for local_fs (relative to the root, or absolute). */
  allowedDir?: string;
  maxReadBytes: number;
  maxOutputBytes: number;
  deniedPathSubstrings: string[];
  /** Globs (root-relative or absolute) no write tool may change, on top of every `.git` (src/fs/protected.ts). */
  protectedPaths: string[];
  maxGrepMatches: number;
  maxFindResults: number;
  /** What the replaced contents kept for undo may take per workspace (src/fs/preimages.ts); the oldest go first. */
  undoMaxBytes: number;
}

export const localFs = table({
  _allowed_dir: text,
  _max_read_bytes: positiveInt("_max_read_bytes"),
  _max_output_bytes: positiveInt("_max_output_bytes"),
  _denied_path_substrings: text,
  _protected_paths: text,
  _max_grep_matches: positiveInt("_max_grep_matches"),
  _max_find_results: positiveInt("_max_find_results"),
  _undo_max_bytes: positiveInt("_undo_max_bytes"),
}).transform((r): LocalFsSettings => ({
  allowedDir: folder(r._allowed_dir),
  maxReadBytes: num(r._max_read_bytes, 1024 * 1024),
  maxOutputBytes: num(r._max_output_bytes, 32 * 1024),
  deniedPathSubstrings: commaList(r._denied_path_substrings),
  protectedPaths: commaList(r._protected_paths),
  maxGrepMatches: num(r._max_grep_matches, 500),
  maxFindResults: num(r._max_find_results, 200),
  undoMaxBytes: num(r._undo_max_bytes, 256 * 1024 * 1024),
}));

/** `_containment`: is every process of the toolset run in the OS sandbox (src/sandbox)? Default "auto". */
const containment = checked("_containment", '"auto", "required" or "off"', (v) =>
  ["auto", "required", "off"].includes(v.trim()),
);
/** `_network`: may contained processes reach the network? "deny" (default) or "allow". */
const network = checked("_network", '"deny" or "allow"', (v) => ["deny", "allow"].includes(v.trim()));
/** local_shell's `_network` adds "ask": a person grants the names a command will reach (sandbox/proxy/). */
const shellNetwork = checked("_network", '"deny", "ask" or "allow"', (v) =>
  ["deny", "ask", "allow"].includes(v.trim()),
);
const DOMAIN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;
const domains = checked(
  "_network_domains",
  'a comma-separated list of host names such as "registry.npmjs.org, *.pythonhosted.org"',
  (v) => commaList(v).every((d) => DOMAIN.test(d)),
);
const TEST_HOST = /^([a-z0-9.-]+)=(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\])(?::(\d{1,5}))?$/i;
const testHosts = checked(
  "_network_test_hosts",
  'a comma-separated list of name=address[:port] such as "registry.test=127.0.0.1:4873" (tests only)',
  (v) => commaList(v).every((d) => TEST_HOST.test(d)),
);

function containmentOf(r: { _containment?: string; _network?: string }): ContainmentSettings {
  return {
    containment: (r._containment?.trim() ?? "auto") as ContainmentSetting,
    network: r._network?.trim() === "allow",
  };
}

/** The proxied network of local_shell, when `_network = "ask"` or names are pre-granted. */
function proxiedOf(r: { _network?: string; _network_domains?: string; _network_test_hosts?: string }): {
  proxied?: ProxiedNetwork;
} {
  const ask = r._network?.trim() === "ask";
  const names = commaList(r._network_domains).map((d) => d.toLowerCase());
  if (r._network?.trim() === "allow" || (!ask && names.length === 0)) return {};
  const hosts = new Map<string, { address: string; port?: number }>();
  for (const h of commaList(r._network_test_hosts)) {
    const [, name, address, port] = TEST_HOST.exec(h)!;
    hosts.set(name.toLowerCase(), {
      address: address.replace(/^\[|\]$/g, ""),
      ...(port ? { port: Number(port) } : {}),
    });
  }
  return { proxied: { ask, domains: names, testHosts: hosts } };
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
  /** What latch may hold for one session's background processes (output buffers, queued input). */
  sessionMemoryBytes: number;
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
const DEFAULT_ENV_ALLOW = [
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

const TIMEOUT_MS = 60_000;
const maxTimeoutOf = (r: { _timeout?: string; _max_timeout?: string }) =>
  num(r._max_timeout, Math.max(600_000, num(r._timeout, TIMEOUT_MS)));

export const localShell = table({
  _allowed_commands: text,
  _denied_commands: text,
  _allowed_dir: text,
  _allowed_paths: text,
  _env_deny: text,
  _env_allow: text,
  _max_output_bytes: positiveInt("_max_output_bytes"),
  _timeout: positiveInt("_timeout"),
  _max_timeout: positiveInt("_max_timeout"),
  _session_memory_bytes: positiveInt("_session_memory_bytes"),
  _containment: containment,
  _network: shellNetwork,
  _network_domains: domains,
  _network_test_hosts: testHosts,
})
  .superRefine((r, ctx) => {
    if (num(r._timeout, TIMEOUT_MS) > maxTimeoutOf(r))
      ctx.addIssue({
        code: "custom",
        path: ["_timeout"],
        input: r._timeout,
        message: expected(
          "_timeout",
          `at most _max_timeout (${maxTimeoutOf(r)} ms)`,
          r._timeout ?? `${TIMEOUT_MS} (the default)`,
        ),
      });
  })
  .transform((r): LocalShellSettings => ({
    allowedCommands: commaList(r._allowed_commands),
    deniedCommands: commaList(r._denied_commands),
    allowedDir: folder(r._allowed_dir),
    allowedPaths: commaList(r._allowed_paths),
    envDeny: r._env_deny === undefined ? DEFAULT_ENV_DENY : commaList(r._env_deny),
    envAllow: [...DEFAULT_ENV_ALLOW, ...commaList(r._env_allow)],
    maxOutputBytes: num(r._max_output_bytes, 64 * 1024),
    timeoutMs: num(r._timeout, TIMEOUT_MS),
    maxTimeoutMs: maxTimeoutOf(r),
    sessionMemoryBytes: num(r._session_memory_bytes, 16 * 1024 * 1024),
    policyActive:
      r._allowed_commands !== undefined || r._denied_commands !== undefined || folder(r._allowed_dir) !== undefined,
    ...containmentOf(r),
    ...proxiedOf(r),
  }));

export interface CatalogSettings extends ContainmentSettings {
  /** "*" for any program on the pinned PATH or in the root; a list of names; undefined when unset. */
  tools: "*" | string[] | undefined;
  maxStreamBytes: number;
  timeoutMs: number;
}

export const catalog = table({
  _tools: text,
  _max_stream_bytes: positiveInt("_max_stream_bytes"),
  _timeout: positiveInt("_timeout"),
  _containment: containment,
  _network: network,
}).transform((r): CatalogSettings => {
  const list = commaList(r._tools);
  return {
    tools: list.length === 0 ? undefined : list.includes("*") ? "*" : list,
    maxStreamBytes: num(r._max_stream_bytes, 64 * 1024),
    timeoutMs: num(r._timeout, 5_000),
    ...containmentOf(r),
  };
});

export interface AstSettings {
  /** The time budget of one AST call, in milliseconds. */
  deadlineMs: number;
}

const DURATION = /^\s*([1-9][0-9]{0,8})\s*(ms|s)?\s*$/;

/** [tools_policies.ast]: `_ast_deadline` is "5s", "500ms", or a bare number of milliseconds (default 5 s). */
export const ast = table({
  _ast_deadline: checked("_ast_deadline", 'a positive duration in a string, such as "5s" or "500ms"', (v) =>
    DURATION.test(v),
  ),
}).transform((r): AstSettings => {
  const m = DURATION.exec(r._ast_deadline ?? "");
  return { deadlineMs: m ? Number(m[1]) * (m[2] === "s" ? 1000 : 1) : 5_000 };
});

export interface SkillsSettings {
  /** `_skill_dirs`: folders of skills, absolute or relative to the root. */
  skillDirs: string[];
}

export const skills = table({ _skill_dirs: text }).transform((r): SkillsSettings => ({
  skillDirs: commaList(r._skill_dirs),
}));

/** local_shell's settings with no table: how run_tool plans its one program (no shell policy of its own). */
export const NO_SHELL_POLICY: LocalShellSettings = Object.freeze(localShell.parse({}));
