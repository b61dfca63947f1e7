// The program tables, and what they say about one command: its capabilities (see types.ts) and the
// findings behind them. Every rule's `match` / `not_match` examples are checked when this module
// loads (as codex execpolicy checks its policy's examples), so a table that contradicts itself never
// ships: the import throws, and the first test that plans a command fails with the rule's name.
import { awk } from "./awk.js";
import { BASIC } from "./basic.js";
import { find } from "./find.js";
import { git } from "./git.js";
import { INTERPRETERS } from "./interpreters.js";
import { make } from "./make.js";
import { NPM } from "./npm.js";
import { RUNNERS, SHELLS_TABLE, WRAPPERS } from "./runners.js";
import { sed } from "./sed.js";
import { tar } from "./tar.js";
import { unwrap, WRAPPER_EXAMPLES } from "../wrappers.js";
import type {
  Capabilities,
  Effect,
  OptionGrammar,
  ParsedArgs,
  ParsedOption,
  ProgramRule,
  ProgramTable,
} from "./types.js";

export type { Capabilities, ProgramTable } from "./types.js";

export const TABLES: readonly ProgramTable[] = [
  git,
  tar,
  sed,
  awk,
  find,
  make,
  ...NPM,
  ...INTERPRETERS,
  ...BASIC,
  WRAPPERS,
  SHELLS_TABLE,
  RUNNERS,
];

const BY_NAME = new Map<string, ProgramTable>();
for (const t of TABLES) for (const n of t.names) BY_NAME.set(n, t);

/** A program's table by one of the names it is run by. */
export function tableFor(name: string): ProgramTable | undefined {
  return BY_NAME.get(name);
}

/** Split a program's arguments into options (clusters split, values found) and operands. */
export function parseArgs(args: readonly string[], grammar: OptionGrammar, subcommands = false): ParsedArgs {
  const out: ParsedArgs = { options: [], operands: [], before: [] };
  const push = (o: ParsedOption) => (out.sub === undefined && subcommands ? out.before : out.options).push(o);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      for (const item of args.slice(i + 1)) out.operands.push(item);
      break;
    }
    if (a === "-" || !a.startsWith("-")) {
      if (subcommands && out.sub === undefined) out.sub = a;
      else out.operands.push(a);
      if (grammar.stopAtOperand) {
        for (const item of args.slice(i + 1)) out.operands.push(item);
        break;
      }
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const typed = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      if (eq >= 0) push({ name: `--${typed}`, value: a.slice(eq + 1) });
      else if (takesLongValue(typed, grammar) && takesNext(args[i + 1])) push({ name: `--${typed}`, value: args[++i] });
      else push({ name: `--${typed}` });
      continue;
    }
    if (grammar.wholeWords) {
      push({ name: a });
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j];
      if (grammar.shortValue?.includes(c)) {
        if (j + 1 < a.length) push({ name: `-${c}`, value: a.slice(j + 1) });
        else push({ name: `-${c}`, value: takesNext(args[i + 1]) ? args[++i] : undefined });
        break;
      }
      push({ name: `-${c}` });
    }
  }
  return out;
}

/**
 * Whether an option's value may be the next word. One that looks like an option is read as an option
 * here (the program may take it as the value): reading too many options only makes more rules fire.
 */
function takesNext(word: string | undefined): boolean {
  return word !== undefined && (word === "-" || !word.startsWith("-"));
}

function takesLongValue(typed: string, g: OptionGrammar): boolean {
  const names = g.longValue ?? [];
  if (names.includes(typed)) return true;
  if (!g.abbrev || typed === "") return false;
  return names.filter((n) => n.startsWith(typed)).length === 1;
}

/** Does the option as given name the rule's option, the way the program matches long options? */
function optionIs(given: string, wanted: string, abbrev: boolean): boolean {
  if (given === wanted) return true;
  if (!wanted.startsWith("--") || !given.startsWith("--")) return false;
  const typed = given.slice(2);
  // A unique prefix is the option itself to getopt_long and to git; any prefix is taken here (an
  // ambiguous one makes the program refuse the line, so counting it costs nothing).
  return abbrev && typed.length >= 2 && wanted.slice(2).startsWith(typed);
}

function fires(rule: ProgramRule, table: ProgramTable, p: ParsedArgs, argv: readonly string[]): boolean {
  if (rule.subcommands && (p.sub === undefined || !rule.subcommands.includes(p.sub))) return false;
  if (rule.always) return true;
  if (rule.options) {
    const pool = rule.subcommands ? p.options : [...p.before, ...p.options];
    if (pool.some((o) => rule.options!.some((w) => optionIs(o.name, w, table.grammar.abbrev)))) return true;
  }
  return rule.when?.(p, argv) ?? false;
}

export interface Finding {
  effect: Effect;
  why: string;
  rule?: ProgramRule;
}

/** What a table says about one command's arguments (argv[0] excluded). */
export function findingsOf(table: ProgramTable, name: string, args: readonly string[]): Finding[] {
  const p = parseArgs(args, table.grammar, table.subcommands);
  const out: Finding[] = (table.base ?? []).map((b) => ({ effect: b.effect, why: `${name}: ${b.why}` }));
  for (const rule of table.rules) {
    if (fires(rule, table, p, args)) out.push({ effect: rule.effect, why: `${name}: ${rule.why}`, rule });
  }
  return out;
}

export const NO_CAPABILITIES: Capabilities = {
  executesCode: false,
  writesFiles: false,
  runsWorkspaceCode: false,
  network: false,
  known: true,
  why: [],
};

/** Capabilities from findings; an unknown program (no table) is taken to write and reach the network. */
export function capabilitiesOf(findings: readonly Finding[], known: boolean, name: string): Capabilities {
  const c: Capabilities = { ...NO_CAPABILITIES, known, why: findings.map((f) => f.why) };
  if (!known) {
    c.writesFiles = true;
    c.network = true;
    c.why.push(`${name}: not in latch's program tables (taken to write files and reach the network)`);
  }
  for (const f of findings) {
    if (f.effect === "exec" || f.effect === "inline") c.executesCode = true;
    if (f.effect === "workspace") c.runsWorkspaceCode = true;
    if (f.effect === "write") c.writesFiles = true;
    if (f.effect === "network") c.network = true;
  }
  return c;
}

/** The union of several commands' capabilities (a step's, a plan's). */
export function unionCapabilities(all: readonly Capabilities[]): Capabilities {
  const c: Capabilities = { ...NO_CAPABILITIES, why: [] };
  for (const x of all) {
    c.executesCode ||= x.executesCode;
    c.writesFiles ||= x.writesFiles;
    c.runsWorkspaceCode ||= x.runsWorkspaceCode;
    c.network ||= x.network;
    c.known &&= x.known;
    for (const w of x.why) if (!c.why.includes(w)) c.why.push(w);
  }
  return c;
}

/** Words of an example line: split on spaces, single-quoted runs kept whole (quotes dropped). */
function exampleWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|(\S+)/g)) {
    const w = m[1] ?? m[2];
    // `--opt='a b'` is one word: a quoted run glued to the previous word joins it.
    if (m.index > 0 && line[m.index - 1] !== " " && out.length > 0) out[out.length - 1] += w;
    else out.push(w);
  }
  return out;
}

/** Every rule's examples, checked; returns the failures (empty when the tables agree with themselves). */
export function checkExamples(tables: readonly ProgramTable[] = TABLES): string[] {
  const bad: string[] = [];
  for (const t of tables) {
    for (const rule of t.rules) {
      if (rule.match.length === 0) bad.push(`${t.names[0]}: the rule "${rule.why}" has no match example`);
      for (const [line, want] of [
        ...rule.match.map((l) => [l, true] as const),
        ...rule.not_match.map((l) => [l, false] as const),
      ]) {
        const words = exampleWords(line);
        if (!t.names.includes(words[0])) {
          bad.push(`${t.names[0]}: the example \`${line}\` does not run ${t.names.join("/")}`);
          continue;
        }
        const got = findingsOf(t, words[0], words.slice(1)).some((f) => f.rule === rule);
        if (got !== want) bad.push(`${t.names[0]}: \`${line}\` ${want ? "should" : "should not"} fire "${rule.why}"`);
      }
    }
  }
  return bad;
}

/** The wrapper table's examples (../wrappers.ts), checked the same way. */
export function checkWrapperExamples(examples: typeof WRAPPER_EXAMPLES = WRAPPER_EXAMPLES): string[] {
  const bad: string[] = [];
  for (const ex of examples) {
    const [program, ...args] = exampleWords(ex.line);
    const got = unwrap([program], args);
    if (got === undefined) bad.push(`\`${ex.line}\`: ${program} is not in the wrapper table`);
    else if (ex.refused && got.refuse === undefined) bad.push(`\`${ex.line}\` should be refused`);
    else if (!ex.refused && got.refuse !== undefined) bad.push(`\`${ex.line}\` is refused: ${got.refuse}`);
    else if (ex.inner !== undefined && got.inner.map((c) => c.argv.join(" ")).join(";") !== ex.inner)
      bad.push(`\`${ex.line}\` should run \`${ex.inner}\``);
    else if (ex.script !== undefined && got.scripts.join(";") !== ex.script)
      bad.push(`\`${ex.line}\` should run the script \`${ex.script}\``);
  }
  return bad;
}
// Not checked at load (it cost every start ~10 ms): scripts/bundle.mjs fails the build on a failure,
// and test/shell/program-tables.test.ts the suite.
