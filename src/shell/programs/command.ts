// One command as the policy sees it: the program it runs (by canonical path), the name it may be
// matched by, and its capabilities from the program tables. A workspace executable named like a
// program on the PATH is a different program: it is known by its path, never by the bare name.
import path from "node:path";
import { isInside } from "../../fs/paths.js";
import { resolveProgramSync } from "../resolve.js";
import type { GitConfigWrite } from "../../policy/effect.js";
import { gitConfigWrite } from "./git-config.js";
import { capabilitiesOf, findingsOf, parseArgs, tableFor, type Finding } from "./index.js";
import type { Capabilities } from "./types.js";

export interface CommandInfo {
  argv: string[];
  /** The canonical program file, or the word itself where none resolves (no-policy mode). */
  program: string;
  /**
   * The name allowlists may match this command by: the bare name when the program is the one that name
   * finds on the PATH latch started with; otherwise its canonical path (a workspace `./ls` is not `ls`).
   */
  name: string;
  capabilities: Capabilities;
  /** What it writes to the repository's `.git/config` (git-config.ts), where it is such a write. */
  gitConfig?: GitConfigWrite;
}

export interface CommandFacts {
  info: CommandInfo;
  findings: Finding[];
  /** Paths the program opens through its own syntax (sed's `w FILE`, git's `REV:PATH`), to check like arguments. */
  paths: string[];
  /** Words that are code or patterns for this program, not paths (sed's script): left out of the path check. */
  notPaths: string[];
}

export function describeCommand(
  argv: string[],
  real: string | undefined,
  ctx: { root: string; cwd: string; startupPath: readonly string[] },
): CommandFacts {
  const word = argv[0];
  const base = path.basename(word);
  const names = real ? [base, path.basename(real)] : [base];
  const tableName = names.find((n) => tableFor(n) !== undefined);
  const table = tableName === undefined ? undefined : tableFor(tableName)!;
  const findings = table ? findingsOf(table, tableName!, argv.slice(1)) : [];
  const inWorkspace = real !== undefined && isInside(ctx.root, real);
  if (inWorkspace) findings.push({ effect: "workspace", why: `${word}: a program in the workspace (${real})` });
  const parsed = table ? parseArgs(argv.slice(1), table.grammar, table.subcommands) : undefined;
  const paths = (parsed && table?.paths?.(parsed, argv.slice(1))) ?? [];
  const notPaths = (parsed && table?.notPaths?.(parsed, argv.slice(1))) ?? [];
  const gitConfig = parsed && tableName === "git" && !inWorkspace ? gitConfigWrite(parsed, argv.slice(1)) : undefined;
  return {
    info: {
      argv,
      program: real ?? word,
      name: identityName(word, real, inWorkspace, ctx),
      capabilities: capabilitiesOf(findings, table !== undefined && !inWorkspace, base),
      ...(gitConfig ? { gitConfig } : {}),
    },
    findings,
    notPaths,
    // git names REV:PATH from the top of the repository, other programs from the cwd: both are checked.
    paths: paths
      .filter((p) => p !== "")
      .flatMap((p) => (path.isAbsolute(p) ? [p] : [path.resolve(ctx.cwd, p), path.resolve(ctx.root, p)])),
  };
}

function identityName(
  word: string,
  real: string | undefined,
  inWorkspace: boolean,
  ctx: { cwd: string; startupPath: readonly string[] },
): string {
  if (real === undefined) return word;
  if (inWorkspace) return real;
  const base = path.basename(word);
  if (!word.includes("/")) return base; // found on the startup PATH, outside the workspace
  // `/usr/bin/git` is `git` when `git` on the PATH is that same file.
  return resolveProgramSync(base, "/", ctx.startupPath) === real ? base : real;
}
