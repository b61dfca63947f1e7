// Parse `[envelopes.NAME]` tables (as TOML gives them) into definitions with their zod schema
// (envelope-schema.ts), and merge a definition with its `extends` chain into an Envelope. Errors carry
// the key path, so the loader can name file, line and key. Unknown keys, partial globs in command
// lists and cycles are errors.
import type { z } from "zod";
import { BUILTIN_ENVELOPES } from "./builtin-envelopes.js";
import { DEFAULT_APPROVAL_TIMEOUT_S, type Envelope, type EnvelopeRule } from "./envelope.js";
import { envelopeDef, type EnvelopeDef } from "./envelope-schema.js";
import { QUARANTINE_GLOBS } from "../fs/quarantine.js";

export class EnvelopeError extends Error {
  constructor(
    readonly keyPath: string[],
    message: string,
  ) {
    super(message);
    this.name = "EnvelopeError";
  }
}

export type { EnvelopeDef };

const MAX_EXTENDS_DEPTH = 8;

function show(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** One `[envelopes.NAME]` table, validated by its zod schema. `at` is its key path, e.g. ["envelopes", "mine"]. */
export function parseEnvelopeDef(raw: unknown, at: string[]): EnvelopeDef {
  const parsed = envelopeDef.safeParse(raw, { reportInput: true, jitless: true });
  if (parsed.success) return parsed.data;
  throw envelopeError(parsed.error.issues[0], at);
}

/** A zod issue in words: the schema's messages are fragments (envelope-schema.ts); the key goes in here. */
export function envelopeError(issue: z.core.$ZodIssue, at: string[]): EnvelopeError {
  const keyPath = [...at, ...issue.path.map(String)];
  const key = keyPath.join(".");
  if (issue.code === "unrecognized_keys") {
    const k = [...keyPath, issue.keys[0]];
    return new EnvelopeError(k, `unknown key \`${k.join(".")}\`; ${issue.message}`);
  }
  const holds = issue.code === "custom" ? (issue.params as { holds?: string } | undefined)?.holds : undefined;
  if (holds !== undefined) return new EnvelopeError(keyPath, `\`${key}\` holds \`${holds}\`: ${issue.message}`);
  return new EnvelopeError(keyPath, `Expected \`${key}\` to be ${issue.message}, got \`${show(issue.input)}\``);
}

/** The quarantine as always_deny rules: first in every envelope, and not removable. */
function quarantineRules(): EnvelopeRule[] {
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
    disclosure: { secrets: "redact", tools: {} },
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
    if (d.disclosure?.secrets) out.disclosure = { ...out.disclosure, secrets: d.disclosure.secrets };
    if (d.disclosure?.tools)
      out.disclosure = { ...out.disclosure, tools: { ...out.disclosure.tools, ...d.disclosure.tools } };
    for (const r of d.always_deny ?? []) out.always_deny.push({ ...r, from: n });
    for (const r of d.always_allow ?? []) out.always_allow.push({ ...r, from: n });
    if (d.timeout !== undefined) out.timeout = d.timeout;
  }
  return out;
}
