// What a call will touch, as the policy reads it (docs/architecture.md, "One host, one call path").
// A tool's plan says it in the typed fields of PlannedEffect: the paths it resolved (src/fs/paths.ts),
// the folders it walks, for the shell axis what would run, for the web axis the URL and its host.
// effectOf() joins that to the axis the tool's own definition declares and gives the Effect: reads,
// writes, walk roots, the commands with every path their words may name, URLs. The envelope, the
// policy programs, the approval's risks and `latch explain` read the Effect, never a plan's other
// fields, and no table beside the tools repeats their axes. Typed, so a tool or planner that changes
// its shape fails to compile rather than leaving the envelope a plan it reads as empty.
import type { ResolvedPath } from "../fs/paths.js";
import type { Capabilities } from "../shell/programs/types.js";
import { argumentPaths, shellView } from "./shell-view.js";

export type Axis = "files.read" | "files.write" | "shell" | "web";

export interface StepEffect {
  argv: string[];
  /** The folder it runs in (planners always say; a plan without one is read as the root). */
  cwd?: string;
  /** The resolved program; "cd" for latch's own cd (with `builtin`), which runs no program. */
  program?: string;
  builtin?: "cd";
}

export interface CommandEffect {
  argv: string[];
  /** The name an allowlist may match it by (a workspace `./ls` is known by its path, not as `ls`). */
  name?: string;
  capabilities?: Capabilities;
}

/** What a shell-axis plan says (local_shell and run_tool plan it: src/shell/plan.ts, src/tools/run_tool.ts). */
export interface ShellEffect {
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
}

/** A path in both forms a glob may be written for: absolute, and root-relative where inside the root. */
export interface PathRef {
  abs: string;
  rel?: string;
}

/** One command that would run, and what the planner knows of it. */
export interface ShellCommand {
  argv: string[];
  /** The name an allowlist may match it by; absent where the plan gives none. */
  name?: string;
  /** What it can do, as the program tables found it (src/shell/programs); absent: unknown. */
  capabilities?: Capabilities;
}

export interface ShellStep {
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
}

/** The call's effect: the plan's typed fields, read by the axis the tool declares. */
export function effectOf(tool: { axis: Axis }, plan: PlannedEffect, where: { root: string; home?: string }): Effect {
  const ref = (p: ResolvedPath): PathRef => ({ abs: p.abs, rel: p.rel });
  const walked = new Set((plan.walks ?? []).map((p) => p.abs));
  const named = (plan.paths ?? []).filter((p) => !walked.has(p.abs)).map(ref);
  const write = tool.axis === "files.write";
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
  return effect;
}

/** Every path the call touches: named, written, walked, and the shell's path arguments, in that order. */
export function touchedPaths(effect: Effect): PathRef[] {
  return [...effect.reads, ...effect.writes, ...effect.walks, ...(effect.shell?.paths ?? [])];
}

function relOf(root: string, abs: string): string | undefined {
  return abs === root ? "." : abs.startsWith(root + "/") ? abs.slice(root.length + 1) : undefined;
}
