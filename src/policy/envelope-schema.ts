// `[envelopes.NAME]` tables (as TOML gives them) as a zod schema: which keys and values are valid, and
// the definition they make. Every message is a fragment the reader (envelope-parse.ts) words with the
// full key: what a value should be ("one of allow, approve, deny"), what a list may not hold, or for a
// table, the keys it accepts.
import { z } from "zod";
import type { Action } from "./decision.js";
import {
  ACTIONS,
  DISCLOSURE_MODES,
  type DisclosureMode,
  type DisclosureRules,
  type PathAxis,
  type ShellAxis,
  type WebAxis,
} from "./envelope.js";

interface RuleDef {
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
  disclosure?: Partial<DisclosureRules>;
  tools?: Record<string, Action>;
  always_deny?: RuleDef[];
  always_allow?: RuleDef[];
  timeout?: number;
  on_timeout?: "deny";
}

/** A table of these keys only; `what` is what anything else in its place should be (a TOML date too). */
function table<S extends Record<string, z.ZodType>>(shape: S, what: string) {
  const keys = z.strictObject(shape, {
    error: (iss) => (iss.code === "unrecognized_keys" ? `accepted: ${Object.keys(shape).join(", ")}` : what),
  });
  return z
    .unknown()
    .refine((v) => !(v instanceof Date), { error: () => what })
    .pipe(keys);
}

/** A list a check runs over: the first entry it refuses is named (`holds`), with why. */
function holdsNo<T extends z.ZodType<string[]>>(list: T, bad: (s: string) => boolean, why: string) {
  return list.superRefine((items, ctx) => {
    const hit = items.find(bad);
    if (hit !== undefined) ctx.addIssue({ code: "custom", message: why, params: { holds: hit }, input: items });
  });
}

/**
 * One `[envelopes.NAME]` table. Its schemas are made at the first envelope parsed, not when the program
 * loads: a start without agents.toml, or without envelopes in it, never uses them (~4 ms of zod at each
 * start, bench/RESULTS.md start).
 */
export const envelopeDef: z.ZodType<EnvelopeDef, unknown> = z.lazy(envelopeTable);

function envelopeTable(): z.ZodType<EnvelopeDef, unknown> {
  const action = z.enum(ACTIONS as [Action, ...Action[]], { error: () => "one of allow, approve, deny" });
  const text = z.string({ error: () => "a nonempty string" }).refine((v) => v.trim() !== "", {
    error: () => "a nonempty string",
  });
  const stringList = z.array(text, { error: () => "a list of strings" });

  const GLOB_CHARS = /[*?[\]{}!]/;
  const NOT_GLOBS = "command lists take whole command names or token prefixes such as `git status`, not globs";
  /** Command lists hold whole command names or token prefixes (`git status`), never globs like `git*`. */
  const commandList = holdsNo(stringList, (c) => GLOB_CHARS.test(c), NOT_GLOBS).transform((l) =>
    l.map((c) => c.trim().split(/\s+/).join(" ")),
  );

  /** Domain lists hold host names (`example.com` covers its subdomains too), lowercase, no scheme, port or glob. */
  const hostOf = (d: string) => d.trim().toLowerCase().replace(/\.$/, "");
  const domainList = holdsNo(
    stringList,
    (d) => !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(hostOf(d)),
    "domain lists take host names such as `example.com` (which covers its subdomains), without scheme, port, path or globs",
  ).transform((l) => l.map(hostOf));

  /** An axis is an action (`shell = "approve"`, its grant) or its table; each form's own errors are kept. */
  function axis<T>(tableSchema: z.ZodType<T>) {
    const grant = action.transform((g) => ({ grant: g }));
    return z.unknown().transform((v, ctx): T | { grant: Action } => {
      const r =
        typeof v === "string"
          ? grant.safeParse(v, { reportInput: true, jitless: true })
          : tableSchema.safeParse(v, { reportInput: true, jitless: true });
      if (r.success) return r.data;
      for (const item of r.error.issues as z.core.$ZodRawIssue[]) ctx.issues.push(item);
      return z.NEVER;
    });
  }

  const pathAxis = axis(
    table(
      { grant: action.optional(), deny_paths: stringList.optional(), approve_paths: stringList.optional() },
      "an action or a table with grant, deny_paths, approve_paths",
    ),
  );

  const SHELL = {
    grant: action.optional(),
    blacklist: commandList.optional(),
    prefix_allowlist: commandList.optional(),
    ask_always: commandList.optional(),
    contained_allowlist: commandList.optional(),
    contained_mode: z
      .enum(["read-only", "workspace-write"], { error: () => '"read-only" or "workspace-write"' })
      .optional(),
    uncontained_allowlist: commandList.optional(),
    allow_git_exec_config: z.boolean({ error: () => "true or false" }).optional(),
  };
  const shellAxis = axis(table(SHELL, `an action or a table with ${Object.keys(SHELL).join(", ")}`));

  const WEB = { grant: action.optional(), allow_domains: domainList.optional(), deny_domains: domainList.optional() };
  const webAxis = axis(table(WEB, `an action or a table with ${Object.keys(WEB).join(", ")}`));

  const disclosureMode = z.enum(DISCLOSURE_MODES as [DisclosureMode, ...DisclosureMode[]], {
    error: () => "one of allow, report, redact, withhold",
  });
  const disclosure = table(
    {
      secrets: disclosureMode.optional(),
      tools: z
        .record(z.string(), disclosureMode, {
          error: () => "a table from tool name or glob to allow, report, redact or withhold",
        })
        .optional(),
    },
    "a table with secrets, tools",
  );

  const rule = table(
    {
      tool: text.optional(),
      when_path: text.optional(),
      when_command: text.optional(),
    },
    "a rule table {tool, when_path, when_command}",
  )
    .superRefine((r, ctx) => {
      if (r.when_command !== undefined && GLOB_CHARS.test(r.when_command))
        ctx.addIssue({ code: "custom", path: ["when_command"], message: NOT_GLOBS, params: { holds: r.when_command } });
    })
    .transform((r): RuleDef => ({ ...r, tool: r.tool ?? "*" }));
  const rules = z.array(rule, { error: () => "a list of rules ({tool, when_path, when_command})" });

  const seconds = z
    .union([z.number(), z.bigint()], { error: () => "a positive whole number of seconds" })
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n > 0, { error: () => "a positive whole number of seconds" });

  return table(
    {
      extends: text.optional(),
      description: text.optional(),
      default_action: action.optional(),
      files: table({ read: pathAxis.optional(), write: pathAxis.optional() }, "a table with read and write").optional(),
      shell: shellAxis.optional(),
      web: webAxis.optional(),
      disclosure: disclosure.optional(),
      tools: z.record(z.string(), action, { error: () => "a table from tool name or glob to an action" }).optional(),
      always_deny: rules.optional(),
      always_allow: rules.optional(),
      timeout: seconds.optional(),
      on_timeout: z.literal("deny", { error: () => "deny (the only answer a timeout may give)" }).optional(),
    },
    "a table",
  );
}
