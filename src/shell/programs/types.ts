// The shapes of the program tables: what one program does through its own options and subcommands,
// as data. Each table is one small file in this folder; index.ts checks every rule's examples at load.

import type { Capabilities } from "../../policy/effect.js";
export type { Capabilities };

/**
 * One rule's effect. `exec` (a program or shell command given as a string, run by the program itself)
 * is refused under a local_shell policy, since the allowlist cannot check it; the others only classify.
 */
export type Effect = "exec" | "inline" | "workspace" | "write" | "network";

/** How a program's options are spelled, enough to split clusters and find values. */
export interface OptionGrammar {
  /** Short options that take a value, attached (`-C/etc`) or as the next word. */
  shortValue?: string;
  /** Long options (without `--`) that take a value as `--opt=value` or the next word. */
  longValue?: readonly string[];
  /** Long options may be abbreviated to any prefix (GNU getopt_long, git's parse-options). */
  abbrev: boolean;
  /** Options are only recognised before the first operand (node, python: the rest belongs to the script). */
  stopAtOperand?: boolean;
  /** Single-dash words that are whole options, not clusters (`-delete` for find, `-m` kept whole). */
  wholeWords?: boolean;
}

export interface ParsedOption {
  /** The option as the rules name it: `-x` for a short one, `--name` as typed (maybe abbreviated) for a long one. */
  name: string;
  value?: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
  /** For programs with a subcommand (git, npm): the first operand, and the options seen before it. */
  sub?: string;
  before: ParsedOption[];
}

export interface ProgramRule {
  effect: Effect;
  /** A short phrase for the reason: `runs the program named by --to-command`. */
  why: string;
  /** Fires when one of these options is given (`-I`, `--use-compress-program`): long ones as the program abbreviates them. */
  options?: readonly string[];
  /** Only with these subcommands (the first operand). */
  subcommands?: readonly string[];
  /** Fires for these subcommands alone (no option needed). */
  always?: boolean;
  /** Or fires when this says so (a sed script with `e`, a git config key). */
  when?: (args: ParsedArgs, argv: readonly string[]) => boolean;
  /** Example command lines (plain words split on spaces, single quotes kept together) that must fire the rule… */
  match: readonly string[];
  /** …and ones that must not. */
  not_match: readonly string[];
}

export interface ProgramTable {
  /** The names the program is run by (`python3`, `python`). */
  names: readonly string[];
  grammar: OptionGrammar;
  /** Whether the first operand is a subcommand (git, npm). */
  subcommands?: boolean;
  /** Effects of running the program at all (mkdir writes). */
  base?: { effect: Effect; why: string }[];
  rules: readonly ProgramRule[];
  /** Paths the program opens that are not words of their own (`sed 'w out'`, git's `REV:PATH`): checked like path arguments. */
  paths?(args: ParsedArgs, argv: readonly string[]): string[];
  /** Words that are code or patterns, not paths (sed's script, awk's program, grep's pattern): not checked as paths. */
  notPaths?(args: ParsedArgs, argv: readonly string[]): string[];
}
