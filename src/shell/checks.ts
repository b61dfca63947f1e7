// The planner's checks of one command under a policy, and the fixed rules of every mode: the
// program against the allow/deny lists and the runners latch never runs, the workspace root deleted,
// and which of a wrapper's words are its own arguments.
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Refusal } from "../errors.js";
import { isInside } from "../fs/paths.js";
import { FixedRuleRefusal } from "./arguments.js";
import { allowedEntry, deniedEntry, type CommandEntry } from "./resolve.js";
import { AS_OTHER_USER, UNMODELLED_RUNNERS, type Unwrapped } from "./wrappers.js";

export interface ProgramRules {
  root: string;
  allowedDir?: string;
  /** Where the command line starts (the root, or the shell's `_allowed_dir`): named when a path misses. */
  home?: string;
  allowed: CommandEntry[];
  denied: CommandEntry[];
}

/**
 * A wrapper's own words: its inner commands' program words and sh -c scripts are left out (checked as
 * programs, and planned, where they run); the inner commands' arguments are checked by their own plan.
 */
export function ownWords(args: string[], wrap: Unwrapped | undefined): string[] {
  if (!wrap) return args;
  const out = [...args];
  for (const w of [...wrap.inner.map((i) => i.argv[0]), ...wrap.scripts]) {
    const at = out.lastIndexOf(w);
    if (at >= 0) out.splice(at, 1);
  }
  return out;
}

/** The words xargs would read from stdin (blank- or NUL-separated; quotes are not interpreted). */
export function stdinWords(stdin: string): string[] {
  return stdin.split(/[\s\0]+/).filter((t) => t !== "");
}

/** find words that select no subset: with them alone, -delete removes the whole tree. */
const EVERYTHING = [
  "-delete",
  "-depth",
  "-xdev",
  "-mount",
  "-maxdepth",
  "-mindepth",
  "-follow",
  "-noleaf",
  "-ignore_readdir_race",
  "-print",
];

/** `rm -rf .` or `find . -delete` on the workspace root itself: refused in every mode. */
export function checkDestroysRoot(argv: string[], real: string | undefined, cwd: string, ctx: ProgramRules): void {
  const names = new Set([path.basename(argv[0]), real ? path.basename(real) : ""]);
  let operands: string[] = [];
  if (names.has("rm")) operands = argv.slice(1).filter((a) => !a.startsWith("-"));
  else if ((names.has("find") || names.has("gfind")) && argv.includes("-delete")) {
    // Only a find whose expression selects everything: `find . -delete`, not `find . -name '*.o' -delete`.
    const end = argv.findIndex((a, i) => i > 0 && /^[-(!]/.test(a));
    const expr = end === -1 ? [] : argv.slice(end);
    const everything = expr.every(
      (a, i) => EVERYTHING.includes(a) || (/^\d+$/.test(a) && /^-(max|min)depth$/.test(expr[i - 1] ?? "")),
    );
    if (everything) operands = argv.slice(1, end === -1 ? undefined : end);
  }
  const home = os.homedir();
  for (const o of operands) {
    const abs = path.resolve(cwd, o);
    if (abs === ctx.root || abs === "/" || abs === home || (ctx.allowedDir !== undefined && abs === ctx.allowedDir))
      throw new FixedRuleRefusal(
        `\`${argv.join(" ")}\` would delete ${abs === ctx.root ? "the whole workspace" : abs}; latch never runs that.`,
        "Do not retry: remove the files you mean by name instead.",
      );
  }
}

export function checkRunner(name: string, shown: string): void {
  if (AS_OTHER_USER.has(name)) {
    throw new Refusal(
      `\`${shown}\` runs commands as another user; it is always refused under a local_shell policy.`,
      "Do not retry: ask the user to run it themselves.",
    );
  }
  if (UNMODELLED_RUNNERS.has(name)) {
    throw new Refusal(
      `\`${shown}\` runs other commands in a way latch does not check; it is refused under a local_shell policy.`,
      "Run the inner command as its own call.",
    );
  }
}

export function checkProgram(word: string, real: string | undefined, ctx: ProgramRules, cwd?: string): void {
  const denied = deniedEntry(word, real, ctx.denied);
  if (denied)
    throw new Refusal(
      `\`${word}\` is denied (_denied_commands has \`${denied.entry}\`).`,
      "Do not retry with another spelling or path of the same program.",
    );
  if (real === undefined && word.includes("/") && cwd !== undefined) throw programPathMissing(word, cwd, ctx);
  if (real === undefined)
    throw new Refusal(
      `\`${word}\` was not found as a program on the PATH latch started with.`,
      "Use a program that is installed, by its name or absolute path.",
    );
  checkRunner(path.basename(real), word);
  if (ctx.allowed.length > 0 && !allowedEntry(word, real, ctx.allowed)) {
    const list = ctx.allowed.map((a) => a.entry).join(", ");
    throw new Refusal(
      `\`${word}\` (${real}) is not on the allowlist (_allowed_commands: ${list}).`,
      "Use one of the allowed programs, by the name it is allowed under.",
    );
  }
  if (ctx.allowedDir !== undefined && !isInside(ctx.allowedDir, real)) {
    throw new Refusal(
      `\`${word}\` resolves to ${real}, outside the shell's allowed folder ${ctx.allowedDir} (_allowed_dir).`,
      "Use a program inside the allowed folder.",
    );
  }
}

/** A program written as a path is not looked up on the PATH: say where it was looked for, and from where. */
function programPathMissing(word: string, cwd: string, ctx: ProgramRules): Refusal {
  const abs = path.resolve(cwd, word);
  const start = ctx.home ?? ctx.root;
  const limited =
    ctx.allowedDir !== undefined && start === ctx.allowedDir ? " (tools_policies.local_shell._allowed_dir)" : "";
  const where = existsSync(cwd)
    ? `it was not found as an executable file at ${abs}`
    : `the folder it runs in, ${cwd}, does not exist (a \`cd\` before it went there)`;
  return new Refusal(
    `\`${word}\` cannot run: ${where}. The command line starts in ${start}${limited}.`,
    `Write the program's path from ${start} (drop a \`cd\` into the folder the line already starts in), or use its absolute path; check it with find_files.`,
  );
}
