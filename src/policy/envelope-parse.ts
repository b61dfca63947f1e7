// Parse `[envelopes.NAME]` tables (as TOML gives them) into definitions, and merge a definition with
// its `extends` chain into an Envelope. Errors carry the key path, so the loader can name file, line
// and key. Unknown keys, partial globs in command lists and cycles are errors.
import type { Action } from "./decision.js";
import { BUILTIN_ENVELOPES } from "./builtin-envelopes.js";
import {
  ACTIONS,
  DEFAULT_APPROVAL_TIMEOUT_S,
  type Envelope,
  type EnvelopeRule,
  type PathAxis,
  type ShellAxis,
  type WebAxis,
} from "./envelope.js";
import { QUARANTINE_GLOBS } from "./quarantine.js";

export class EnvelopeError extends Error {
  constructor(
    readonly keyPath: string[],
    message: string,
  ) {
    super(message);
    this.name = "EnvelopeError";
  }
}

export interface RuleDef {
  tool: string;
  when_path?: string;
  when_command?: string;
}

export interface EnvelopeDef {
  extends?: string;
  description?: string;
  default_action?: Action;
  files?: { read?: Partial<PathAxis>; write?: Partial<PathAxis> };
  shell?: Partial<ShellAxis>;
  web?: Partial<WebAxis>;
  tools?: Record<string, Action>;
  always_deny?: RuleDef[];
  always_allow?: RuleDef[];
  timeout?: number;
  on_timeout?: "deny";
}

export const MAX_EXTENDS_DEPTH = 8;

const TOP_KEYS = [
  "extends",
  "description",
  "default_action",
  "files",
  "shell",
  "web",
  "tools",
  "always_deny",
  "always_allow",
  "timeout",
  "on_timeout",
];
const PATH_AXIS_KEYS = ["grant", "deny_paths", "approve_paths"];
const SHELL_KEYS = [
  "grant",
  "blacklist",
  "prefix_allowlist",
  "ask_always",
  "contained_allowlist",
  "contained_mode",
  "uncontained_allowlist",
];
const WEB_KEYS = ["grant", "allow_domains", "deny_domains"];
const RULE_KEYS = ["tool", "when_path", "when_command"];
const GLOB_CHARS = /[*?[\]{}!]/;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function show(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function checkKeys(obj: Obj, allowed: string[], at: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k))
      throw new EnvelopeError([...at, k], `unknown key \`${[...at, k].join(".")}\`; accepted: ${allowed.join(", ")}`);
  }
}

function action(v: unknown, at: string[]): Action {
  if (typeof v !== "string" || !ACTIONS.includes(v as Action)) {
    throw new EnvelopeError(at, `Expected \`${at.join(".")}\` to be one of allow, approve, deny, got \`${show(v)}\``);
  }
  return v as Action;
}

function text(v: unknown, at: string[]): string {
  if (typeof v !== "string" || v.trim() === "")
    throw new EnvelopeError(at, `Expected \`${at.join(".")}\` to be a nonempty string, got \`${show(v)}\``);
  return v;
}

function stringList(v: unknown, at: string[]): string[] {
  if (!Array.isArray(v))
    throw new EnvelopeError(at, `Expected \`${at.join(".")}\` to be a list of strings, got \`${show(v)}\``);
  return v.map((s, i) => text(s, [...at, String(i)]));
}

/** Command lists hold whole command names or token prefixes (`git status`), never globs like `git*`. */
function commandList(v: unknown, at: string[]): string[] {
  const list = stringList(v, at);
  for (const c of list) checkCommandPrefix(c, at);
  return list.map((c) => c.trim().split(/\s+/).join(" "));
}

function checkCommandPrefix(c: string, at: string[]): void {
  if (GLOB_CHARS.test(c)) {
    throw new EnvelopeError(
      at,
      `\`${at.join(".")}\` holds \`${c}\`: command lists take whole command names or token prefixes such as \`git status\`, not globs`,
    );
  }
}

function pathAxis(v: unknown, at: string[]): Partial<PathAxis> {
  if (typeof v === "string") return { grant: action(v, at) };
  if (!isObj(v))
    throw new EnvelopeError(
      at,
      `Expected \`${at.join(".")}\` to be an action or a table with grant, deny_paths, approve_paths, got \`${show(v)}\``,
    );
  checkKeys(v, PATH_AXIS_KEYS, at);
  const out: Partial<PathAxis> = {};
  if (v.grant !== undefined) out.grant = action(v.grant, [...at, "grant"]);
  if (v.deny_paths !== undefined) out.deny_paths = stringList(v.deny_paths, [...at, "deny_paths"]);
  if (v.approve_paths !== undefined) out.approve_paths = stringList(v.approve_paths, [...at, "approve_paths"]);
  return out;
}

function shellAxis(v: unknown, at: string[]): Partial<ShellAxis> {
  if (typeof v === "string") return { grant: action(v, at) };
  if (!isObj(v))
    throw new EnvelopeError(
      at,
      `Expected \`${at.join(".")}\` to be an action or a table with ${SHELL_KEYS.join(", ")}, got \`${show(v)}\``,
    );
  checkKeys(v, SHELL_KEYS, at);
  const out: Partial<ShellAxis> = {};
  if (v.grant !== undefined) out.grant = action(v.grant, [...at, "grant"]);
  for (const k of [
    "blacklist",
    "prefix_allowlist",
    "ask_always",
    "contained_allowlist",
    "uncontained_allowlist",
  ] as const) {
    if (v[k] !== undefined) out[k] = commandList(v[k], [...at, k]);
  }
  if (v.contained_mode !== undefined) {
    if (v.contained_mode !== "read-only" && v.contained_mode !== "workspace-write")
      throw new EnvelopeError(
        [...at, "contained_mode"],
        `Expected \`${[...at, "contained_mode"].join(".")}\` to be "read-only" or "workspace-write", got \`${show(v.contained_mode)}\``,
      );
    out.contained_mode = v.contained_mode;
  }
  return out;
}

/** Domain lists hold host names (`example.com` covers its subdomains too), lowercase, no scheme, port or glob. */
function domainList(v: unknown, at: string[]): string[] {
  return stringList(v, at).map((d) => {
    const host = d.trim().toLowerCase().replace(/\.$/, "");
    if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host))
      throw new EnvelopeError(
        at,
        `\`${at.join(".")}\` holds \`${d}\`: domain lists take host names such as \`example.com\` (which covers its subdomains), without scheme, port, path or globs`,
      );
    return host;
  });
}

function webAxis(v: unknown, at: string[]): Partial<WebAxis> {
  if (typeof v === "string") return { grant: action(v, at) };
  if (!isObj(v))
    throw new EnvelopeError(
      at,
      `Expected \`${at.join(".")}\` to be an action or a table with ${WEB_KEYS.join(", ")}, got \`${show(v)}\``,
    );
  checkKeys(v, WEB_KEYS, at);
  const out: Partial<WebAxis> = {};
  if (v.grant !== undefined) out.grant = action(v.grant, [...at, "grant"]);
  if (v.allow_domains !== undefined) out.allow_domains = domainList(v.allow_domains, [...at, "allow_domains"]);
  if (v.deny_domains !== undefined) out.deny_domains = domainList(v.deny_domains, [...at, "deny_domains"]);
  return out;
}

function rules(v: unknown, at: string[]): RuleDef[] {
  if (!Array.isArray(v))
    throw new EnvelopeError(
      at,
      `Expected \`${at.join(".")}\` to be a list of rules ({tool, when_path, when_command}), got \`${show(v)}\``,
    );
  return v.map((r, i) => {
    const here = [...at, String(i)];
    if (!isObj(r))
      throw new EnvelopeError(here, `Expected a rule table {tool, when_path, when_command}, got \`${show(r)}\``);
    checkKeys(r, RULE_KEYS, here);
    const rule: RuleDef = { tool: r.tool === undefined ? "*" : text(r.tool, [...at, "tool"]) };
    if (r.when_path !== undefined) rule.when_path = text(r.when_path, [...at, "when_path"]);
    if (r.when_command !== undefined) {
      rule.when_command = text(r.when_command, [...at, "when_command"]);
      checkCommandPrefix(rule.when_command, [...at, "when_command"]);
    }
    return rule;
  });
}

/** One `[envelopes.NAME]` table, validated. `at` is its key path, e.g. ["envelopes", "mine"]. */
export function parseEnvelopeDef(raw: unknown, at: string[]): EnvelopeDef {
  if (!isObj(raw)) throw new EnvelopeError(at, `Expected \`${at.join(".")}\` to be a table, got \`${show(raw)}\``);
  checkKeys(raw, TOP_KEYS, at);
  const def: EnvelopeDef = {};
  if (raw.extends !== undefined) def.extends = text(raw.extends, [...at, "extends"]);
  if (raw.description !== undefined) def.description = text(raw.description, [...at, "description"]);
  if (raw.default_action !== undefined) def.default_action = action(raw.default_action, [...at, "default_action"]);
  if (raw.files !== undefined) {
    const f = raw.files;
    if (!isObj(f))
      throw new EnvelopeError(
        [...at, "files"],
        `Expected \`${[...at, "files"].join(".")}\` to be a table with read and write`,
      );
    checkKeys(f, ["read", "write"], [...at, "files"]);
    def.files = {};
    if (f.read !== undefined) def.files.read = pathAxis(f.read, [...at, "files", "read"]);
    if (f.write !== undefined) def.files.write = pathAxis(f.write, [...at, "files", "write"]);
  }
  if (raw.shell !== undefined) def.shell = shellAxis(raw.shell, [...at, "shell"]);
  if (raw.web !== undefined) def.web = webAxis(raw.web, [...at, "web"]);
  if (raw.tools !== undefined) {
    if (!isObj(raw.tools))
      throw new EnvelopeError(
        [...at, "tools"],
        `Expected \`${[...at, "tools"].join(".")}\` to be a table from tool name or glob to an action`,
      );
    def.tools = {};
    for (const [k, v] of Object.entries(raw.tools)) def.tools[k] = action(v, [...at, "tools", k]);
  }
  if (raw.always_deny !== undefined) def.always_deny = rules(raw.always_deny, [...at, "always_deny"]);
  if (raw.always_allow !== undefined) def.always_allow = rules(raw.always_allow, [...at, "always_allow"]);
  if (raw.timeout !== undefined) {
    const t = raw.timeout;
    if (typeof t !== "number" && typeof t !== "bigint")
      throw new EnvelopeError(
        [...at, "timeout"],
        `Expected \`${[...at, "timeout"].join(".")}\` to be a positive whole number of seconds, got \`${show(t)}\``,
      );
    const n = Number(t);
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new EnvelopeError(
        [...at, "timeout"],
        `Expected \`${[...at, "timeout"].join(".")}\` to be a positive whole number of seconds, got \`${String(t)}\``,
      );
    def.timeout = n;
  }
  if (raw.on_timeout !== undefined) {
    if (raw.on_timeout !== "deny")
      throw new EnvelopeError(
        [...at, "on_timeout"],
        `Expected \`${[...at, "on_timeout"].join(".")}\` to be deny (the only answer a timeout may give), got \`${show(raw.on_timeout)}\``,
      );
    def.on_timeout = "deny";
  }
  return def;
}

/** The quarantine as always_deny rules: first in every envelope, and not removable. */
export function quarantineRules(): EnvelopeRule[] {
  return QUARANTINE_GLOBS.map((g) => ({ tool: "*", when_path: g, from: "quarantine" }));
}

/** The definitions visible to `extends`: the built-ins, then the user's (which may not reuse a built-in name). */
export function allDefinitions(user: Record<string, EnvelopeDef>): Record<string, EnvelopeDef> {
  return { ...BUILTIN_ENVELOPES, ...user };
}

/** Merge `name` with its ancestors. Lists replace the parent's; only always_* accumulate. */
export function resolveEnvelope(name: string, defs: Record<string, EnvelopeDef>): Envelope {
  const chain: string[] = [];
  for (let cur: string | undefined = name; cur !== undefined; cur = defs[cur].extends) {
    if (chain.includes(cur)) {
      throw new EnvelopeError(
        ["envelopes", chain[chain.length - 1], "extends"],
        `envelope \`${name}\` extends in a cycle: ${[...chain, cur].join(" → ")}`,
      );
    }
    if (!(cur in defs)) {
      const from = chain[chain.length - 1];
      const at = from === undefined ? ["envelope"] : ["envelopes", from, "extends"];
      throw new EnvelopeError(at, `unknown envelope \`${cur}\`; known: ${Object.keys(defs).join(", ")}`);
    }
    chain.push(cur);
    if (chain.length > MAX_EXTENDS_DEPTH + 1) {
      throw new EnvelopeError(
        ["envelopes", name, "extends"],
        `envelope \`${name}\` extends more than ${MAX_EXTENDS_DEPTH} levels: ${chain.join(" → ")}`,
      );
    }
  }
  const out: Envelope = {
    name,
    chain,
    description: "",
    default_action: "approve",
    files: { read: { deny_paths: [], approve_paths: [] }, write: { deny_paths: [], approve_paths: [] } },
    shell: { blacklist: [], prefix_allowlist: [], ask_always: [], contained_allowlist: [] },
    web: { allow_domains: [], deny_domains: [] },
    tools: {},
    always_deny: quarantineRules(),
    always_allow: [],
    timeout: DEFAULT_APPROVAL_TIMEOUT_S,
    on_timeout: "deny",
  };
  for (const n of [...chain].reverse()) {
    const d = defs[n];
    if (d.description !== undefined) out.description = d.description;
    if (d.default_action !== undefined) out.default_action = d.default_action;
    if (d.files?.read) out.files.read = { ...out.files.read, ...d.files.read };
    if (d.files?.write) out.files.write = { ...out.files.write, ...d.files.write };
    if (d.shell) out.shell = { ...out.shell, ...d.shell };
    if (d.web) out.web = { ...out.web, ...d.web };
    if (d.tools) out.tools = { ...out.tools, ...d.tools };
    for (const r of d.always_deny ?? []) out.always_deny.push({ ...r, from: n });
    for (const r of d.always_allow ?? []) out.always_allow.push({ ...r, from: n });
    if (d.timeout !== undefined) out.timeout = d.timeout;
  }
  return out;
}
