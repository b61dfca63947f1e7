// Step 3 of the call path: what an envelope says about one call. First match wins:
//  1 always_deny (the quarantine first) → 2 deny_paths (write, then read), web.deny_domains → 3 approve_paths →
//  4 tools patterns, most specific first → 5 always_allow → 6 the axis grant (shell: blacklist →
//  prefix_allowlist → ask_always → grant; web: allow_domains → grant) → 7 default_action. A write the
//  rules allow to a file other programs run later (fs/protected.ts RUNS_LATER) asks instead.
import type { Action, Decision } from "./decision.js";
import { domainMatches, toolMatches, type Envelope, type EnvelopeRule, type PathAxis } from "./envelope.js";
import { envelopeGlob } from "../fs/glob.js";
import { isInside } from "../fs/paths.js";
import { quarantineGlob } from "../fs/quarantine.js";
import { RUNS_LATER, runsLaterGlob } from "../fs/protected.js";
import {
  commandName,
  commandsToCheck,
  startsWithPrefix,
  touchedPaths,
  type Axis,
  type Effect,
  type PathRef,
  type ShellRun,
} from "./effect.js";
import { showName } from "../fs/names.js";

export interface EnvelopeQuery {
  tool: string;
  /** What the call will touch (effect.ts), with the axis the tool's definition declares. */
  effect: Effect;
  /** The canonical workspace root, for root-relative path matching. */
  root: string;
  /** For the shell axis: does the call run contained, with network? Unknown: the envelope's tiers as written. */
  sandbox?: SandboxState;
}

function matchingPath(glob: string, paths: PathRef[]): PathRef | undefined {
  const test = envelopeGlob(glob);
  return paths.find((p) => test(p.abs) || (p.rel !== undefined && test(p.rel)));
}

function describeRule(r: EnvelopeRule): string {
  const parts = [`tool "${r.tool}"`];
  if (r.when_path) parts.push(`when_path "${r.when_path}"`);
  if (r.when_command) parts.push(`when_command "${r.when_command}"`);
  return parts.join(", ");
}

/**
 * Whether a rule matches, and what it matched (for the reason). `any`: one path and one command of the
 * call suffice (always_deny: a rule that forbids must catch any part). `every`: each path and each
 * command of the call must match (always_allow: `touch a && rm -rf b` is not all `touch`, and a patch
 * over `scratch/x` and `src/y` is not all under `scratch/**`).
 */
function ruleMatch(
  r: EnvelopeRule,
  q: EnvelopeQuery,
  paths: PathRef[],
  cmds: string[][],
  how: "any" | "every",
): string | undefined {
  if (!toolMatches(r.tool, q.tool)) return undefined;
  const what: string[] = [];
  if (r.when_path) {
    const p = how === "any" ? matchingPath(r.when_path, paths) : everyPath(r.when_path, paths);
    if (!p) return undefined;
    what.push(showName(p.rel ?? p.abs));
  }
  if (r.when_command) {
    const hit = (argv: string[]) => startsWithPrefix(argv, r.when_command!);
    const c = how === "any" ? cmds.find(hit) : cmds.length > 0 && cmds.every(hit) ? cmds[0] : undefined;
    if (!c) return undefined;
    what.push(how === "any" || cmds.length === 1 ? c.join(" ") : `every command (${cmds.length})`);
  }
  return what.length ? what.join(", ") : q.tool;
}

/** The first path when the glob matches every one of them (and there is one), else undefined. */
function everyPath(glob: string, paths: PathRef[]): PathRef | undefined {
  const test = envelopeGlob(glob);
  const ok = paths.length > 0 && paths.every((p) => test(p.abs) || (p.rel !== undefined && test(p.rel)));
  return ok ? paths[0] : undefined;
}

function decide(env: Envelope, action: Action, rule: string, why: string): Decision {
  return { action, reason: `envelope ${env.name}: ${why}`, gate: "envelope", origin: `envelope:${env.name}/${rule}` };
}

/** Tools-table patterns, most specific first: exact names, then globs by the length of their literal part. */
export function orderedToolPatterns<T>(tools: Record<string, T>): [string, T][] {
  const literal = (p: string) => p.replace(/[*?[\]{}!]/g, "").length;
  const exact = (p: string) => !/[*?[\]{}!]/.test(p);
  return Object.entries(tools).sort(([a], [b]) => Number(exact(b)) - Number(exact(a)) || literal(b) - literal(a));
}

export function evaluateEnvelope(env: Envelope, q: EnvelopeQuery): Decision {
  const d = envelopeRules(env, q);
  if (q.effect.axis === "shell") return gitConfigGate(env, q.effect, d);
  if (d.action !== "allow" || q.effect.axis !== "files.write") return d;
  // A file other programs run later (editor tasks, hooks, rc files: fs/protected.ts) is never written
  // unasked, whatever allowed it; a rule that denies or asks stands as it is.
  for (const p of q.effect.writes) {
    const glob = p.runsLater ?? runsLaterGlob(p.abs);
    if (glob !== undefined)
      return decide(
        env,
        "approve",
        "runs_later",
        `a file other programs run later: \`${showName(p.rel ?? p.abs)}\` (${glob}); writing it needs approval`,
      );
  }
  return d;
}

/**
 * A command that writes `.git/config` (src/shell/programs/git-config.ts): never without a person's yes
 * (the sandbox makes the file writable for that step only once a person approved it), the request
 * naming each key and value; and a key whose value git runs as a program is refused even then, unless
 * the envelope says `shell.allow_git_exec_config = true`. A rule that denies stands.
 */
function gitConfigGate(env: Envelope, effect: Effect, d: Decision): Decision {
  const writes = (effect.shell?.commands ?? []).flatMap((c) => (c.gitConfig ? [{ argv: c.argv, w: c.gitConfig }] : []));
  if (writes.length === 0 || d.action === "deny") return d;
  const exec = writes.find((x) => x.w.exec.length > 0);
  if (exec && env.shell.allow_git_exec_config !== true)
    return decide(
      env,
      "deny",
      "git_config",
      `\`${exec.argv.join(" ").slice(0, 120)}\` sets ${exec.w.exec.join(", ")}, a config key whose value git runs as a program: refused even with approval (an envelope with shell.allow_git_exec_config = true opens it)`,
    );
  const what = `writes .git/config: ${writes.flatMap((x) => x.w.changes).join("; ")}`;
  if (d.action === "approve") return { ...d, reason: `${d.reason}; ${what}` };
  return decide(env, "approve", "git_config", `${what}; a change to git's config needs a person's approval`);
}

function envelopeRules(env: Envelope, q: EnvelopeQuery): Decision {
  const axis = q.effect.axis;
  const view = q.effect.shell;
  const paths = touchedPaths(q.effect);
  const cmds = view ? commandsToCheck(view) : [];

  // 1. always_deny, the quarantine first
  // The quarantine's rules are listed in always_deny; they are tried through quarantineGlob, which
  // knows their exceptions (`.env.example`).
  for (const p of paths) {
    const glob = quarantineGlob(p.abs);
    if (glob === undefined) continue;
    const i = env.always_deny.findIndex((r) => r.from === "quarantine" && r.when_path === glob);
    return decide(
      env,
      "deny",
      `always_deny[${i}]`,
      `\`${showName(p.rel ?? p.abs)}\` is under the credential quarantine (${glob}); no envelope opens it to any tool`,
    );
  }
  for (const [i, r] of env.always_deny.entries()) {
    if (r.from === "quarantine") continue;
    const hit = ruleMatch(r, q, paths, cmds, "any");
    if (hit === undefined) continue;
    return decide(env, "deny", `always_deny[${i}]`, `always_deny (${describeRule(r)}, from ${r.from}) matches ${hit}`);
  }

  // 2–3. path rules: the write axis for write tools; the read axis for read tools and for write tools
  // too (an edit's diff and its no-match message show content, so a path closed to reads stays closed).
  const pathAxes: [string, PathAxis][] =
    axis === "files.write"
      ? [
          ["files.write", env.files.write],
          ["files.read", env.files.read],
        ]
      : axis === "files.read"
        ? [["files.read", env.files.read]]
        : [];
  for (const kind of ["deny_paths", "approve_paths"] as const) {
    for (const [name, ax] of pathAxes) {
      for (const glob of ax[kind]) {
        const p = matchingPath(glob, paths);
        if (p)
          return decide(
            env,
            kind === "deny_paths" ? "deny" : "approve",
            `${name}.${kind}`,
            `${name}.${kind} "${glob}" matches \`${showName(p.rel ?? p.abs)}\``,
          );
      }
    }
  }

  // 2 (web). deny_domains: any host the call names (url_fetch's host) under a denied domain
  const hosts = q.effect.web?.hosts ?? [];
  for (const d of env.web.deny_domains) {
    const h = hosts.find((x) => domainMatches(d, x));
    if (h) return decide(env, "deny", "web.deny_domains", `web.deny_domains "${d}" matches \`${h}\``);
  }

  // 4. the tools table
  for (const [pattern, act] of orderedToolPatterns(env.tools)) {
    if (toolMatches(pattern, q.tool))
      return decide(env, act, `tools.${pattern}`, `tools."${pattern}" = ${act} for ${q.tool}`);
  }

  // 5. always_allow
  for (const [i, r] of env.always_allow.entries()) {
    const hit = ruleMatch(r, q, paths, cmds, "every");
    if (hit !== undefined)
      return decide(
        env,
        "allow",
        `always_allow[${i}]`,
        `always_allow (${describeRule(r)}, from ${r.from}) matches ${hit}`,
      );
  }

  // 6. the axis grant
  if (axis === "shell") {
    const d = shellTiers(env, q, view, cmds);
    if (d) return d;
  } else if (axis === "web") {
    const allowed = env.web.allow_domains.find((d) => hosts.length > 0 && hosts.every((x) => domainMatches(d, x)));
    if (allowed)
      return decide(env, "allow", "web.allow_domains", `web.allow_domains "${allowed}" covers \`${hosts.join(", ")}\``);
    if (env.web.grant) return decide(env, env.web.grant, "web.grant", `web = ${env.web.grant} for ${q.tool}`);
  } else if (axis === "files.read" || axis === "files.write") {
    const grant = axis === "files.read" ? env.files.read.grant : env.files.write.grant;
    if (grant) return decide(env, grant, `${axis}.grant`, `${axis} = ${grant} for ${q.tool}`);
  }

  // 7. default_action
  return decide(env, env.default_action, "default_action", `no rule decides; default_action = ${env.default_action}`);
}

/**
 * Whether the call's processes run in the OS sandbox, and with network. Boxed (contained, no network):
 * the read-only tier runs with a read-only workspace and contained_allowlist applies. Not boxed:
 * uncontained_allowlist, when the envelope has one, replaces the read-only tier.
 */
export interface SandboxState {
  contained: boolean;
  network: boolean;
}

function shellTiers(
  env: Envelope,
  q: EnvelopeQuery,
  view: ShellRun | undefined,
  cmds: string[][],
): Decision | undefined {
  const sh = env.shell;
  for (const argv of cmds) {
    const bad = sh.blacklist.find((b) => startsWithPrefix(argv, b));
    if (bad) return decide(env, "deny", "shell.blacklist", `shell.blacklist "${bad}" matches \`${argv.join(" ")}\``);
  }
  // Every command that would run (wrappers' inner ones included) must start with an allowed prefix,
  // matched by the planner's identity of its program; an unparsed line never qualifies, as nobody knows
  // what it runs. The read-only tier (prefix_allowlist, or uncontained_allowlist when not boxed) also
  // excludes a command that runs code latch cannot read (inline code, a command in an option or config
  // key, workspace scripts), or that writes files. What the planner cannot see (a command in
  // .git/config) the sandbox bounds: the read-only tier's processes get a read-only workspace.
  let note = "";
  const caps = view?.capabilities;
  const beyondReading =
    caps === undefined
      ? "the plan does not say what its commands can do"
      : caps.executesCode || caps.runsWorkspaceCode || caps.writesFiles
        ? caps.why.join("; ")
        : undefined;
  const parsed = view !== undefined && view.raw === undefined && view.commands.length > 0;
  const boxed = q.sandbox === undefined || (q.sandbox.contained && !q.sandbox.network);
  const every = (list: string[]) =>
    parsed && list.length > 0 && view.commands.every((c) => list.some((p) => startsWithPrefix(c.argv, p, c.name)));
  const names = () => [...new Set(view!.commands.map((c) => commandName(c.argv)))].join(", ");
  const staysInRoot = () => view !== undefined && view.paths.every((p) => isInside(q.root, p.abs));
  const why = boxed ? "" : q.sandbox!.contained ? " (contained, with network)" : " (uncontained)";
  const [tier, list] =
    !boxed && sh.uncontained_allowlist !== undefined
      ? (["shell.uncontained_allowlist", sh.uncontained_allowlist] as const)
      : (["shell.prefix_allowlist", sh.prefix_allowlist] as const);
  const inRoot = tier === "shell.prefix_allowlist" || staysInRoot();
  if (every(list) && inRoot && beyondReading !== undefined)
    note = ` (it starts with a prefix in ${tier}, but does more than read: ${beyondReading})`;
  else if (every(list) && inRoot) {
    // The read-only tier: contained, its processes get a read-only workspace.
    const where = tier === "shell.uncontained_allowlist" ? " and names no path outside the root" : "";
    return {
      ...decide(env, "allow", tier, `every command (${names()}) starts with a prefix in ${tier}${where}${why}`),
      mode: "read-only",
    };
  }
  // The contained tier: developer commands run code by nature (tests, builds); a read-only-tier command
  // made to do more than read (an executing or writing option) still asks.
  const containedTier =
    boxed &&
    q.sandbox !== undefined &&
    sh.contained_allowlist.length > 0 &&
    every([...sh.prefix_allowlist, ...sh.contained_allowlist]) &&
    (beyondReading === undefined || every(sh.contained_allowlist)) &&
    staysInRoot();
  if (containedTier) {
    const mode = sh.contained_mode ?? "read-only";
    return {
      ...decide(
        env,
        "allow",
        "shell.contained_allowlist",
        `contained without network, every command (${names()}) starts with a prefix in shell.prefix_allowlist or shell.contained_allowlist and names no path outside the root: runs ${mode}`,
      ),
      mode,
    };
  }
  for (const argv of cmds) {
    const ask = sh.ask_always.find((a) => startsWithPrefix(argv, a));
    if (ask)
      return decide(env, "approve", "shell.ask_always", `shell.ask_always "${ask}" matches \`${argv.join(" ")}\``);
  }
  if (sh.grant) {
    const what =
      view === undefined
        ? "a command the envelope cannot read"
        : view.raw !== undefined
          ? "an unparsed command line"
          : "this command";
    return decide(env, sh.grant, "shell.grant", `shell = ${sh.grant} for ${what}${note}`);
  }
  return undefined;
}

/**
 * The rules of an envelope in the order they are tried, one line each (for `latch config check`); each
 * axis names the tools whose definitions declare it.
 */
export function describeEnvelope(env: Envelope, tools: readonly { name: string; axis: Axis }[]): string[] {
  const axisTools = (axis: Axis) =>
    tools
      .filter((t) => t.axis === axis)
      .map((t) => t.name)
      .join(", ");
  const out: string[] = [];
  const n = (s: string) => out.push(`${out.length + 1}. ${s}`);
  for (const r of env.always_deny) n(`always_deny: ${describeRule(r)} (from ${r.from}) → deny`);
  for (const k of ["deny_paths", "approve_paths"] as const) {
    for (const [name, ax] of [
      ["files.write", env.files.write],
      ["files.read", env.files.read],
    ] as const) {
      for (const g of ax[k]) n(`${name}.${k}: "${g}" → ${k === "deny_paths" ? "deny" : "approve"}`);
    }
  }
  for (const d of env.web.deny_domains) n(`web.deny_domains: "${d}" and its subdomains → deny`);
  for (const [p, a] of orderedToolPatterns(env.tools)) n(`tools."${p}" → ${a}`);
  for (const r of env.always_allow)
    n(`always_allow: ${describeRule(r)} (from ${r.from}), every path and command → allow`);
  n(`files.read (${axisTools("files.read")}) → ${env.files.read.grant ?? "default_action"}`);
  n(`files.write (${axisTools("files.write")}) → ${env.files.write.grant ?? "default_action"}`);
  for (const b of env.shell.blacklist) n(`shell.blacklist: "${b}" anywhere in the line → deny`);
  const list = (l: string[]) => l.map((p) => `"${p}"`).join(", ");
  const sh = env.shell;
  if (sh.uncontained_allowlist !== undefined)
    n(
      `shell.uncontained_allowlist (uncontained, or with network): every command starts with one of ${list(sh.uncontained_allowlist)}, no path outside the root → allow`,
    );
  if (sh.prefix_allowlist.length)
    n(
      `shell.prefix_allowlist${sh.uncontained_allowlist !== undefined ? " (contained without network)" : ""}: every command starts with one of ${list(sh.prefix_allowlist)} → allow, read-only workspace`,
    );
  if (sh.contained_allowlist.length)
    n(
      `shell.contained_allowlist (contained without network): every command starts with one of those or ${list(sh.contained_allowlist)}, no path outside the root → allow, ${sh.contained_mode ?? "read-only"} workspace`,
    );
  for (const a of env.shell.ask_always) n(`shell.ask_always: "${a}" → approve`);
  n(`shell (${axisTools("shell")}) → ${env.shell.grant ?? "default_action"}`);
  for (const d of env.web.allow_domains) n(`web.allow_domains: "${d}" and its subdomains → allow`);
  n(`web (${axisTools("web")}) → ${env.web.grant ?? "default_action"}`);
  const attached = axisTools("attached");
  if (attached) n(`attached tools (${attached}): no axis rule; the tools table above, else default_action`);
  n(
    `shell: a write of .git/config (git config, git remote add, git submodule add) → approve, naming each key; a key that runs a program → ${sh.allow_git_exec_config ? "approve (allow_git_exec_config)" : "deny"}`,
  );
  n(`files.write to a file other programs run later (${RUNS_LATER.join(", ")}), where a rule here allows it → approve`);
  n(`default_action → ${env.default_action}`);
  return out;
}
