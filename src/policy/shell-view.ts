// What the envelope reads of a shell plan: the steps that run a program (latch's own `cd` runs none),
// every argv that would run with the name each may be matched by and what it can do, or the unparsed
// line; and the words of those that may name a path. A plan with none of these yields no view: the
// envelope then treats the call as unknown (never allowlisted). effectOf (effect.ts) builds the
// shell axis's effect from these.
import os from "node:os";
import path from "node:path";
import type { ShellEffect, ShellRun } from "./effect.js";

export type ShellView = Omit<ShellRun, "paths">;

export function shellView(plan: ShellEffect): ShellView | undefined {
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
