// What the envelope reads of a shell plan (the contract with local_shell / run_tool `plan()`):
// `steps: {argv, cwd, program}[]`, `commands: string[][]` (every argv that would run, wrappers' inner
// commands included) and `raw` for a line that was not parsed. Read defensively: a plan of another
// shape yields no commands, and the envelope then treats the line as unknown (never allowlisted).
import os from "node:os";
import path from "node:path";
import type { Plan } from "../tools/define.js";

export interface ShellStep {
  argv: string[];
  cwd: string;
  program?: string;
}

export interface ShellView {
  steps: ShellStep[];
  /** Every argv that would run; at least the steps' own argvs. */
  commands: string[][];
  /** The unparsed line, when the plan hands a line to /bin/sh as is. */
  raw?: string;
  /**
   * For each of `commands`, the name an allowlist may match it by (the planner's: a workspace `./ls` is
   * known by its path, not as `ls`); undefined where the plan gives none.
   */
  names: (string | undefined)[];
  /** What the commands can do, as the planner classified them (src/shell/programs); absent: unknown. */
  capabilities?: ShellCapabilities;
}

export interface ShellCapabilities {
  executesCode: boolean;
  writesFiles: boolean;
  runsWorkspaceCode: boolean;
  why: string[];
}

function isArgv(v: unknown): v is string[] {
  return Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string");
}

export function shellView(plan: Plan): ShellView | undefined {
  const steps: ShellStep[] = [];
  if (Array.isArray(plan.steps)) {
    for (const s of plan.steps as unknown[]) {
      const o = s as { argv?: unknown; cwd?: unknown; program?: unknown; builtin?: unknown };
      // latch's own `cd` runs no program: it needs no allowlist entry and matches no blacklist.
      if (o && o.builtin === undefined && isArgv(o.argv))
        steps.push({
          argv: o.argv,
          cwd: typeof o.cwd === "string" ? o.cwd : "",
          program: typeof o.program === "string" ? o.program : undefined,
        });
    }
  }
  const commands: string[][] = [];
  if (Array.isArray(plan.commands)) for (const c of plan.commands as unknown[]) if (isArgv(c)) commands.push(c);
  for (const s of steps) if (!commands.some((c) => sameArgv(c, s.argv))) commands.push(s.argv);
  const raw = typeof plan.raw === "string" ? plan.raw : undefined;
  if (steps.length === 0 && commands.length === 0 && raw === undefined) return undefined;
  const programs = Array.isArray(plan.programs) ? (plan.programs as { argv?: unknown; name?: unknown }[]) : [];
  const names = commands.map((c) => {
    const p = programs.find((x) => isArgv(x?.argv) && sameArgv(x.argv, c));
    return typeof p?.name === "string" ? p.name : undefined;
  });
  const caps = plan.capabilities as Partial<ShellCapabilities> | undefined;
  const capabilities =
    caps && typeof caps === "object" && Array.isArray(caps.why)
      ? {
          executesCode: caps.executesCode !== false,
          writesFiles: caps.writesFiles !== false,
          runsWorkspaceCode: caps.runsWorkspaceCode !== false,
          why: caps.why.filter((w): w is string => typeof w === "string"),
        }
      : undefined;
  return { steps, commands, raw, names, capabilities };
}

function sameArgv(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Whitespace tokens of an unparsed line, quotes stripped: enough to spot names, never to allow. */
export function rawTokens(raw: string): string[] {
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
export function argumentPaths(view: ShellView, root: string, home: string = os.homedir()): string[] {
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
  for (const c of view.commands) for (const tok of c) add(tok, cwds);
  if (view.raw !== undefined) for (const tok of rawTokens(view.raw)) add(tok, cwds);
  return [...out];
}

/** Every command to check against name lists: parsed argvs, or the tokens of a raw line as one argv each. */
export function commandsToCheck(view: ShellView): string[][] {
  const cmds = [...view.commands];
  if (view.raw !== undefined) {
    const toks = rawTokens(view.raw);
    // In an unparsed line any token could be a command: check each as a start.
    for (let i = 0; i < toks.length; i++) cmds.push(toks.slice(i));
  }
  return cmds;
}
