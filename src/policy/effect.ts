// What a call will touch, as the policy reads it (docs/architecture.md, "One host, one call path").
// A tool's plan says it in the typed fields of PlannedEffect: the paths it resolved (src/fs/paths.ts),
// the folders it walks, for the shell axis what would run, for the web axis the URL and its host.
// effectOf() joins that to the axis the tool's own definition declares and gives the Effect: reads,
// writes, walk roots, the commands with every path their words may name, URLs. The envelope, the
// policy programs, the approval's risks and `latch explain` read the Effect, never a plan's other
// fields, and no table beside the tools repeats their axes. Typed, so a tool or planner that changes
// its shape fails to compile rather than leaving the envelope a plan it reads as empty.
import os from "node:os";
import path from "node:path";
import { isInside, type ResolvedPath } from "../fs/paths.js";

export type Axis = "files.read" | "files.write" | "shell" | "web" | "attached";

/**
 * The `attached` axis: a tool of an MCP server or OpenAPI service latch attached (src/gateway/). No
 * axis rule names it: the envelope's tools table (`github__*`) or default_action decides. What the
 * server claims of it (annotations) is shown to programs, never trusted to lower a decision.
 */
export interface AttachedEffect {
  server: string;
  /** The upstream's own name of the tool (or the OpenAPI operationId). */
  tool: string;
  kind: "mcp" | "openapi";
  /** The server's annotations as it sent them (claims). */
  annotations?: Record<string, unknown>;
  /** The sha256 of the definition the call was approved against (src/gateway/pins.ts). */
  pin?: string;
  /** OpenAPI: the request it makes. */
  method?: string;
  url?: string;
}

/**
 * What running one command can do, as the sandbox and the envelope read it. Every command of a plan
 * (a wrapper's inner ones included) has one; a step's is the union of its commands'.
 */
export interface Capabilities {
  /** Runs code latch cannot check word by word: inline code (`node -e`), a command in an option or a config key. */
  executesCode: boolean;
  /** Writes or deletes files (in the workspace, or where its path arguments point). */
  writesFiles: boolean;
  /** Runs code defined in the workspace: package.json scripts, a Makefile, a script file, a workspace executable. */
  runsWorkspaceCode: boolean;
  /** May reach the network (fetch, clone, install). */
  network: boolean;
  /** Whether latch has a table for the program; an unknown one is taken to write and reach the network. */
  known: boolean;
  /** Why, one short phrase per finding (`node -e: runs inline code`). */
  why: string[];
}

export interface StepEffect {
  argv: string[];
  /** The folder it runs in (planners always say; a plan without one is read as the root). */
  cwd?: string;
  /** The resolved program; "cd" for latch's own cd (with `builtin`), which runs no program. */
  program?: string;
  builtin?: "cd";
}

/**
 * A write of the repository's own `.git/config` (`git config`, `git remote add`, `git submodule add`),
 * as src/shell/programs/git-config.ts reads it: what a person approves, and what the guard keeps.
 */
export interface GitConfigWrite {
  /** One line per change, as shown to the person: `set user.name = "x"`. */
  changes: string[];
  /** The keys it may change, as `git config --list` names them; one ending in `.` covers its whole section. */
  keys: string[];
  /** Of those, the keys whose value git runs as a program (refused unless shell.allow_git_exec_config). */
  exec: string[];
}

interface CommandEffect {
  argv: string[];
  /** The name an allowlist may match it by (a workspace `./ls` is known by its path, not as `ls`). */
  name?: string;
  capabilities?: Capabilities;
  gitConfig?: GitConfigWrite;
}

/** What a shell-axis plan says (local_shell and run_tool plan it: src/shell/plan.ts, src/tools/run_tool.ts). */
interface ShellEffect {
  steps?: StepEffect[];
  /** Every argv that would run, wrappers' inner commands included. */
  commands?: string[][];
  /** For each of `commands`, in the same order. */
  programs?: CommandEffect[];
  /** The union of every command's. */
  capabilities?: Capabilities;
  /** A line handed to /bin/sh as is (no-policy `shell: true`). */
  raw?: string;
}

/** The fields of a plan the policy owns (src/tools/define.ts: Plan extends this). */
export interface PlannedEffect extends ShellEffect {
  /** Every path the call names, resolved: read by a files.read tool, changed by a files.write tool. */
  paths?: ResolvedPath[];
  /** Of `paths`, the folders whose entries the call walks; each entry passes src/policy/visibility.ts. */
  walks?: ResolvedPath[];
  /** The web axis: the URLs the call fetches, and their hosts (what the domain lists look at). */
  urls?: string[];
  hosts?: string[];
  /** The attached axis: which server's tool. */
  attached?: AttachedEffect;
}

/** A path in both forms a glob may be written for: absolute, and root-relative where inside the root. */
export interface PathRef {
  abs: string;
  rel?: string;
  /** Why a written path runs later where its name does not say so (a hooks folder a config names). */
  runsLater?: string;
}

/** One command that would run, and what the planner knows of it. */
interface ShellCommand {
  argv: string[];
  /** The name an allowlist may match it by; absent where the plan gives none. */
  name?: string;
  /** What it can do, as the program tables found it (src/shell/programs); absent: unknown. */
  capabilities?: Capabilities;
  /** What it writes to `.git/config`, where it is such a write. */
  gitConfig?: GitConfigWrite;
}

interface ShellStep {
  argv: string[];
  /** "" where the plan did not say (read as the root). */
  cwd: string;
  program?: string;
}

/** The shell axis's effect: what runs, where, and every path its words may name. */
export interface ShellRun {
  /** The steps that run a program (latch's own `cd` runs none). */
  steps: ShellStep[];
  /** Every argv that would run; at least the steps' own. */
  commands: ShellCommand[];
  /** The unparsed line, when the plan hands a line to /bin/sh as is. */
  raw?: string;
  /** What the commands can do together; absent: unknown. */
  capabilities?: Capabilities;
  /**
   * Every path a word may name (each token, an `--opt=value` value, `~` expanded, relative ones from
   * the step's folder), programs included. Over-inclusive on purpose: a false match only makes a rule
   * stricter.
   */
  paths: PathRef[];
}

export interface Effect {
  /** The tool's own (its definition in src/tools/<name>.ts). */
  axis: Axis;
  /** Files and folders read by name. */
  reads: PathRef[];
  /** Files and folders created, changed, moved or removed (a write also reads what it changes). */
  writes: PathRef[];
  /** Folders whose entries are walked, each entry through the visibility rule. */
  walks: PathRef[];
  shell?: ShellRun;
  web?: { urls: string[]; hosts: string[] };
  attached?: AttachedEffect;
}

/** The call's effect: the plan's typed fields, read by the axis the tool declares. */
export function effectOf(
  tool: { axis: Axis },
  plan: PlannedEffect,
  where: { root: string; home?: string; runsLater?: readonly string[] },
): Effect {
  const write = tool.axis === "files.write";
  const configNamed = where.runsLater ?? [];
  const ref = (p: ResolvedPath): PathRef =>
    write && configNamed.some((n) => isInside(n, p.abs))
      ? { abs: p.abs, rel: p.rel, runsLater: "core.hooksPath or include.path of the git config" }
      : { abs: p.abs, rel: p.rel };
  const walked = new Set((plan.walks ?? []).map((p) => p.abs));
  const named = (plan.paths ?? []).filter((p) => !walked.has(p.abs)).map(ref);
  const effect: Effect = {
    axis: tool.axis,
    reads: write ? [] : named,
    writes: write ? named : [],
    walks: (plan.walks ?? []).map(ref),
  };
  if (tool.axis === "shell") {
    const view = shellView(plan);
    if (view) {
      const paths = argumentPaths(view, where.root, where.home).map((abs) => ({ abs, rel: relOf(where.root, abs) }));
      effect.shell = { ...view, paths };
    }
  }
  if (tool.axis === "web") effect.web = { urls: plan.urls ?? [], hosts: plan.hosts ?? [] };
  if (tool.axis === "attached" && plan.attached) effect.attached = plan.attached;
  return effect;
}

/** Every path the call touches: named, written, walked, and the shell's path arguments, in that order. */
export function touchedPaths(effect: Effect): PathRef[] {
  return [...effect.reads, ...effect.writes, ...effect.walks, ...(effect.shell?.paths ?? [])];
}

function relOf(root: string, abs: string): string | undefined {
  return abs === root ? "." : abs.startsWith(root + "/") ? abs.slice(root.length + 1) : undefined;
}

// The shell view: what the envelope reads of a shell plan. The steps that run a program (latch's own
// `cd` runs none), every argv that would run with the name each may be matched by and what it can do,
// or the unparsed line; and the words of those that may name a path. A plan with none of these yields
// no view: the envelope then treats the call as unknown (never allowlisted).
export type ShellView = Omit<ShellRun, "paths">;

function shellView(plan: ShellEffect): ShellView | undefined {
  const steps = (plan.steps ?? [])
    .filter((s) => s.builtin === undefined && s.argv.length > 0)
    .map((s) => ({ argv: s.argv, cwd: s.cwd ?? "", program: s.program }));
  const argvs = (plan.commands ?? []).filter((c) => c.length > 0);
  for (const s of steps) if (!argvs.some((c) => sameArgv(c, s.argv))) argvs.push(s.argv);
  const raw = plan.raw;
  if (steps.length === 0 && argvs.length === 0 && raw === undefined) return undefined;
  const programs = plan.programs ?? [];
  const commands = argvs.map((argv) => {
    const known = programs.find((x) => sameArgv(x.argv, argv));
    return {
      argv,
      ...(known?.name !== undefined ? { name: known.name } : {}),
      ...(known?.capabilities !== undefined ? { capabilities: known.capabilities } : {}),
      ...(known?.gitConfig !== undefined ? { gitConfig: known.gitConfig } : {}),
    };
  });
  return {
    steps,
    commands,
    ...(raw !== undefined ? { raw } : {}),
    ...(plan.capabilities !== undefined ? { capabilities: plan.capabilities } : {}),
  };
}

function sameArgv(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Whitespace tokens of an unparsed line, quotes stripped: enough to spot names, never to allow. */
function rawTokens(raw: string): string[] {
  return raw
    .split(/[\s;&|()<>`]+/)
    .map((t) => t.replace(/^['"]+|['"]+$/g, ""))
    .filter((t) => t !== "");
}

/** A command's name for matching: the basename of argv[0], so `/usr/bin/git` is `git`. */
export function commandName(argv: string[]): string {
  return path.basename(argv[0] ?? "");
}

/**
 * Whether `argv` starts with the whole tokens of `prefix` (`git status` matches `git status -s`, not
 * `git statusx`). With `name` (the planner's identity of the program) the first token must be that name.
 */
export function startsWithPrefix(argv: string[], prefix: string, name?: string): boolean {
  const want = prefix.trim().split(/\s+/);
  if (argv.length < want.length) return false;
  if (name !== undefined ? name !== want[0] : commandName(argv) !== want[0] && argv[0] !== want[0]) return false;
  for (let i = 1; i < want.length; i++) if (argv[i] !== want[i]) return false;
  return true;
}

/**
 * Absolute paths that a command's arguments may name: each token, and the part after `=` in
 * `--opt=value`, with `~` expanded and relative ones taken from the step's folder. Over-inclusive on
 * purpose: a false match only makes a rule stricter.
 */
function argumentPaths(view: ShellView, root: string, home: string = os.homedir()): string[] {
  const out = new Set<string>();
  const cwds = new Set<string>([root, ...view.steps.map((s) => s.cwd).filter((c) => c !== "")]);
  const add = (tok: string, cwds: Iterable<string>) => {
    for (const t of [tok, ...(tok.includes("=") ? [tok.slice(tok.indexOf("=") + 1)] : [])]) {
      if (t === "") continue;
      const expanded = t === "~" ? home : t.startsWith("~/") ? path.join(home, t.slice(2)) : t;
      if (path.isAbsolute(expanded)) out.add(path.normalize(expanded));
      else for (const c of cwds) out.add(path.resolve(c, expanded));
    }
  };
  for (const s of view.steps) for (const tok of s.argv) add(tok, s.cwd ? [s.cwd] : cwds);
  for (const c of view.commands) for (const tok of c.argv) add(tok, cwds);
  if (view.raw !== undefined) for (const tok of rawTokens(view.raw)) add(tok, cwds);
  return [...out];
}

/** Every command to check against name lists: parsed argvs, or the tokens of a raw line as one argv each. */
export function commandsToCheck(view: ShellView): string[][] {
  const cmds = view.commands.map((c) => c.argv);
  if (view.raw !== undefined) {
    const toks = rawTokens(view.raw);
    // In an unparsed line any token could be a command: check each as a start.
    for (let i = 0; i < toks.length; i++) cmds.push(toks.slice(i));
  }
  return cmds;
}
