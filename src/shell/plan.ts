// The planner: a parsed command line, under local_shell's policy, becomes a list of steps (literal
// argv, cwd, resolved program) and the tree of && / || that joins them — or a Refusal that names the
// construct. Every program that would run, wrappers' inner commands included, is checked before
// anything runs; what the planner does not positively understand is refused.
import type { PlannedEffect, StepEffect } from "../policy/effect.js";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { LocalShellSettings } from "../config/toolsets.js";
import { Refusal, ToolError } from "../errors.js";
import { canonicalize, isInside, type ResolvedPath } from "../fs/paths.js";
import { FixedRuleRefusal, checkArgs } from "./arguments.js";
import { describeCommand, type CommandInfo } from "./programs/command.js";
import { NO_CAPABILITIES, unionCapabilities, type Capabilities } from "./programs/index.js";
import { MAX_LINE_BYTES, MAX_WORDS, controlCharacter, countWords } from "./line.js";
import { parseLine, type ShScript, type ShStmt } from "./parse.js";
import { resolveEntries, resolveProgram, type CommandEntry } from "./resolve.js";
import { literalWord } from "./words.js";
import { unwrap } from "./wrappers.js";
import { checkDestroysRoot, checkProgram, checkRunner, ownWords, stdinWords } from "./checks.js";

export interface PlannedStep extends StepEffect {
  argv: string[];
  cwd: string;
  /** The resolved absolute program, or the bare name where none resolves (no-policy mode); "cd" for latch's own cd. */
  program: string;
  builtin?: "cd";
  /** For cd: the folder it moves the later steps to. */
  target?: string;
  /** What the step can do: the union of its commands' (a wrapper's inner ones included). The sandbox reads it. */
  capabilities: Capabilities;
}

export type ExecNode = { kind: "step"; index: number } | { kind: "and" | "or"; left: ExecNode; right: ExecNode };

export interface ShellPlan extends PlannedEffect {
  /** The top-level steps, in order. */
  steps: PlannedStep[];
  /** Every argv that would be executed, wrappers' inner commands and sh -c scripts included. */
  commands: string[][];
  /** For each of `commands`, in the same order: its program, the name it may be matched by, its capabilities. */
  programs: CommandInfo[];
  /** The union of every command's capabilities. */
  capabilities: Capabilities;
  /** How the steps are joined: run in order, each node with its sh meaning. */
  sequence: ExecNode[];
  /** A line handed to /bin/sh unparsed (no-policy `shell: true`). */
  raw?: string;
  policy: boolean;
  /** What latch could not see into (no-policy mode only; under a policy these are refusals). */
  opaque: string[];
  parse?: ShScript;
}

export interface ShellArgs {
  command: string;
  args?: string[];
  cwd?: string;
  shell?: boolean;
  stdin?: string;
}

export interface PlanContext {
  root: string;
  settings: LocalShellSettings;
  startupPath: readonly string[];
  controlPlane: readonly string[];
  /** The HOME latch started with (its startup environment's): arguments may not reach its credential stores. */
  userHome: string | undefined;
  /** Do the call's processes run contained? Unset counts as no (arguments.ts is stricter then). */
  contained?: boolean;
  resolve(input: string): Promise<ResolvedPath>;
}

/** sh -c inside sh -c … at most this deep. */
const MAX_SCRIPT_DEPTH = 4;
const MAX_WRAPPER_NESTING = 16;

interface Ctx extends PlanContext {
  policy: boolean;
  home: string;
  allowedDir?: string;
  allowed: CommandEntry[];
  denied: CommandEntry[];
  allowedPaths: string[];
  stdin?: string;
  opaque: string[];
}

export async function planShellCall(args: ShellArgs, pc: PlanContext): Promise<ShellPlan> {
  const ctx = await makeCtx(pc, args.stdin);
  const cwd = await startCwd(args.cwd, ctx);
  if (args.shell) {
    if (ctx.policy) {
      throw new Refusal(
        "`shell: true` is refused while a local_shell policy is active: the line would run unchecked.",
        "Drop `shell` and write the line with plain words joined by && , || or ; (no pipes, redirections or expansions).",
      );
    }
    if (args.args !== undefined)
      throw new ToolError(
        "EINVAL",
        "Expected `args` to be absent when `shell` is true; put the whole line in `command`.",
      );
    const argv = ["/bin/sh", "-c", args.command];
    const capabilities: Capabilities = {
      executesCode: true,
      writesFiles: true,
      runsWorkspaceCode: true,
      network: true,
      known: false,
      why: ["sh -c: a line handed to /bin/sh unparsed"],
    };
    return {
      steps: [{ argv, cwd, program: "/bin/sh", capabilities }],
      commands: [argv],
      programs: [{ argv, program: "/bin/sh", name: "sh", capabilities }],
      capabilities,
      sequence: [{ kind: "step", index: 0 }],
      raw: args.command,
      policy: false,
      opaque: ["a line handed to /bin/sh unparsed"],
    };
  }
  if (args.args !== undefined) {
    const argv = [args.command, ...args.args];
    checkText(argv.join(" "), ctx);
    const planned = await planCommand(argv, cwd, ctx, 0, 0, false);
    const capabilities = unionCapabilities(planned.programs.map((p) => p.capabilities));
    return {
      steps: [{ argv, cwd, program: planned.program, capabilities }],
      commands: planned.commands,
      programs: planned.programs,
      capabilities,
      sequence: [{ kind: "step", index: 0 }],
      policy: ctx.policy,
      opaque: ctx.opaque,
    };
  }
  const out = await planScript(args.command, cwd, ctx, 0);
  return {
    steps: out.steps,
    commands: out.commands,
    programs: out.programs,
    capabilities: unionCapabilities(out.programs.map((p) => p.capabilities)),
    sequence: out.sequence,
    policy: ctx.policy,
    opaque: ctx.opaque,
    parse: out.parse,
  };
}

async function makeCtx(pc: PlanContext, stdin: string | undefined): Promise<Ctx> {
  const s = pc.settings;
  let allowedDir: string | undefined;
  if (s.allowedDir !== undefined) {
    allowedDir = await canonicalize(path.resolve(pc.root, s.allowedDir));
    const st = await stat(allowedDir).catch(() => undefined); // reported as the config error below
    if (!st?.isDirectory())
      throw new ToolError(
        "ENOTDIR",
        `Expected \`tools_policies.local_shell._allowed_dir\` to be an existing folder, got \`${s.allowedDir}\`.`,
      );
  }
  const home = allowedDir !== undefined && isInside(pc.root, allowedDir) ? allowedDir : pc.root;
  return {
    ...pc,
    policy: s.policyActive,
    home,
    allowedDir,
    allowed: await resolveEntries(s.allowedCommands, pc.startupPath),
    denied: await resolveEntries(s.deniedCommands, pc.startupPath),
    allowedPaths: await Promise.all(s.allowedPaths.map((p) => canonicalize(path.resolve(pc.root, p)))),
    stdin,
    opaque: [],
  };
}

async function startCwd(input: string | undefined, ctx: Ctx): Promise<string> {
  if (input === undefined) return ctx.home;
  const r = await ctx.resolve(input);
  const st = await stat(r.abs).catch(() => undefined); // a missing folder is reported just below
  if (!st?.isDirectory())
    throw new ToolError(
      st ? "ENOTDIR" : "ENOENT",
      `Expected \`cwd\` to be an existing folder in the workspace, got \`${input}\`.`,
    );
  checkInAllowedDir(r.abs, input, ctx);
  return r.abs;
}

function checkInAllowedDir(abs: string, shown: string, ctx: Ctx): void {
  if (ctx.allowedDir !== undefined && !isInside(ctx.allowedDir, abs)) {
    throw new Refusal(
      `\`${shown}\` is outside the shell's allowed folder ${ctx.allowedDir} (_allowed_dir).`,
      "Work inside the allowed folder.",
    );
  }
}

function hint(ctx: Ctx): string {
  return ctx.policy
    ? "Make that part its own call, written with plain literal words (quote arguments with single quotes)."
    : "Make that part its own call, or pass `shell: true` to hand the whole line to /bin/sh.";
}

function construct(what: string, ctx: Ctx): Refusal {
  return new Refusal(`The command line uses ${what}, which latch's shell does not run.`, hint(ctx));
}

function checkText(text: string, ctx: Ctx): void {
  if (Buffer.byteLength(text) > MAX_LINE_BYTES)
    throw new Refusal(`The command is over ${MAX_LINE_BYTES} bytes.`, "Split the work into smaller calls.");
  const c = controlCharacter(text);
  if (c) throw construct(`a control or invisible character (${c})`, ctx);
}

interface ScriptPlan {
  steps: PlannedStep[];
  commands: string[][];
  programs: CommandInfo[];
  sequence: ExecNode[];
  parse: ShScript;
}

async function planScript(line: string, cwd: string, ctx: Ctx, depth: number): Promise<ScriptPlan> {
  checkText(line, ctx);
  // The parser drops a backslash-newline from the word it joins, so it is refused before parsing.
  if (line.includes("\\\n")) throw construct("a line continuation (backslash-newline)", ctx);
  if (countWords(line) > MAX_WORDS)
    throw new Refusal(`The command line has more than ${MAX_WORDS} words.`, "Split the work into smaller calls.");
  const parsed = parseLine(line);
  if (!parsed.ok) {
    if (parsed.construct) throw construct(`${parsed.construct}, which is not POSIX sh`, ctx);
    throw new Refusal(
      `The command line does not parse as POSIX sh (${parsed.error}).`,
      parsed.incomplete ? "Close the open quote or finish the line." : hint(ctx),
    );
  }
  const out: ScriptPlan = { steps: [], commands: [], programs: [], sequence: [], parse: parsed.script };
  const state = { cwd };
  for (const stmt of parsed.script.stmts) out.sequence.push(await planStmt(stmt, true, state, out, ctx, depth));
  return out;
}

async function planStmt(
  stmt: ShStmt,
  unconditional: boolean,
  state: { cwd: string },
  out: ScriptPlan,
  ctx: Ctx,
  depth: number,
): Promise<ExecNode> {
  if (stmt.negated) throw construct("`!` (negation)", ctx);
  if (stmt.background) throw construct("`&` (a background job)", ctx);
  if (stmt.redirects.length > 0)
    throw construct(
      stmt.redirects.includes("heredoc") ? "a heredoc (`<<`)" : "a redirection (`>`, `<`, `>>`, `2>&1`, …)",
      ctx,
    );
  const cmd = stmt.cmd;
  if (cmd === null) throw construct("a statement with no command", ctx);
  switch (cmd.type) {
    case "pipe":
      throw construct("a pipe (`|`)", ctx);
    case "unsupported":
      throw construct(cmd.construct, ctx);
    case "and":
    case "or": {
      // sh lists are left-associative, so the leftmost command always runs and the rest may not.
      const left = await planStmt(cmd.left, unconditional, state, out, ctx, depth);
      const right = await planStmt(cmd.right, false, state, out, ctx, depth);
      return { kind: cmd.type, left, right };
    }
    case "call": {
      if (cmd.assigns.length > 0) throw construct(`a \`${cmd.assigns[0]}=…\` variable assignment`, ctx);
      const argv: string[] = [];
      for (const w of cmd.args) {
        const v = literalWord(w);
        if (!v.ok) throw construct(v.construct, ctx);
        argv.push(v.value);
      }
      if (argv.length === 0 || argv[0] === "") throw construct("an empty command name", ctx);
      const index = out.steps.length;
      if (argv[0] === "cd") {
        if (!unconditional)
          throw construct("a `cd` after && or || (latch tracks the folder statically, so cd must always run)", ctx);
        const target = await planCd(argv, state.cwd, ctx);
        out.steps.push({ argv, cwd: state.cwd, program: "cd", builtin: "cd", target, capabilities: NO_CAPABILITIES });
        state.cwd = target;
      } else {
        const planned = await planCommand(argv, state.cwd, ctx, depth, 0, false);
        const capabilities = unionCapabilities(planned.programs.map((p) => p.capabilities));
        out.steps.push({ argv, cwd: state.cwd, program: planned.program, capabilities });
        for (const item of planned.commands) out.commands.push(item);
        for (const item of planned.programs) out.programs.push(item);
      }
      return { kind: "step", index };
    }
  }
}

async function planCd(argv: string[], cwd: string, ctx: Ctx): Promise<string> {
  if (argv.length === 1) return ctx.home;
  if (argv.length > 2 || argv[1].startsWith("-") || argv[1] === "")
    throw construct(`\`${argv.join(" ")}\` (cd takes exactly one folder, and no options)`, ctx);
  const r = await ctx.resolve(path.resolve(cwd, argv[1])); // refuses leaving the root
  checkInAllowedDir(r.abs, argv[1], ctx);
  const st = await stat(r.abs).catch(() => undefined); // a folder an earlier step creates is fine
  if (st && !st.isDirectory()) throw new Refusal(`\`cd ${argv[1]}\`: not a folder.`, "cd into a folder.");
  return r.abs;
}

interface PlannedCommand {
  program: string;
  commands: string[][];
  programs: CommandInfo[];
}

async function planCommand(
  argv: string[],
  cwd: string,
  ctx: Ctx,
  depth: number,
  nesting: number,
  execdir: boolean,
): Promise<PlannedCommand> {
  if (nesting > MAX_WRAPPER_NESTING) throw construct(`wrappers nested more than ${MAX_WRAPPER_NESTING} deep`, ctx);
  const word = argv[0];
  const base = path.basename(word);
  if (ctx.policy) {
    if (!/^[\x21-\x7e]+$/.test(word)) {
      throw new Refusal(
        `The program name \`${word}\` has characters outside printable ASCII (a look-alike of another name?).`,
        "Write the program's name in plain ASCII.",
      );
    }
    checkRunner(base, word);
    if (execdir && word.includes("/") && !path.isAbsolute(word)) {
      throw new Refusal(
        `\`find -execdir ${word}\` runs a relative path from each found file's folder, so latch cannot know the program.`,
        "Use a program name from the PATH or an absolute path.",
      );
    }
  }
  const real = await resolveProgram(word, cwd, ctx.startupPath);
  if (ctx.policy) checkProgram(word, real, ctx, cwd);
  const facts = describeCommand(argv, real, { root: ctx.root, cwd, startupPath: ctx.startupPath });
  if (ctx.policy) {
    // A program made to run a command given as a string (an option, a config key, a script command)
    // runs something the allowlist never sees.
    const exec = facts.findings.find((f) => f.effect === "exec");
    if (exec)
      throw new Refusal(
        `${exec.why.replace(/^[^:]*: /, `\`${argv.join(" ").slice(0, 80)}\` `)}, which latch cannot check under a local_shell policy.`,
        "Run the program you need as its own call, with its literal words.",
      );
  }
  checkDestroysRoot(argv, real, cwd, ctx);
  const commands: string[][] = [argv];
  const programs: CommandInfo[] = [facts.info];
  const wrap = unwrap(real ? [base, path.basename(real)] : [base], argv.slice(1));
  if (wrap) {
    await nested(ctx, async () => {
      if (wrap.refuse)
        throw new Refusal(`${wrap.refuse}.`, "Run the inner command as its own call, with its literal words.");
      if (ctx.policy && wrap.setsEnv?.length)
        throw construct(`\`env ${wrap.setsEnv[0]}\` (setting variables, like a VAR=x prefix)`, ctx);
      // xargs appends words read from stdin to its inner command: plan them as if they were on the line,
      // so `xargs git` fed `-c core.pager=…` is seen for what it runs.
      const fed = wrap.wrapper === "xargs" && ctx.stdin !== undefined ? stdinWords(ctx.stdin) : [];
      for (const inner of wrap.inner) {
        const innerArgv = fed.length > 0 ? [...inner.argv, ...fed] : inner.argv;
        const sub = await planCommand(innerArgv, cwd, ctx, depth, nesting + 1, inner.execdir === true);
        for (const item of sub.commands) commands.push(item);
        for (const item of sub.programs) programs.push(item);
      }
      for (const script of wrap.scripts) {
        if (depth + 1 > MAX_SCRIPT_DEPTH)
          throw construct(`sh -c scripts nested more than ${MAX_SCRIPT_DEPTH} levels deep`, ctx);
        const sub = await planScript(script, cwd, ctx, depth + 1);
        for (const item of sub.commands) commands.push(item);
        for (const item of sub.programs) programs.push(item);
      }
    });
  }
  // After the inner commands, so `env rm -rf /` is refused for naming rm, the more useful reason.
  await checkArgs(
    ownWords(argv.slice(1), wrap).filter((w) => !facts.notPaths.includes(w)),
    cwd,
    ctx,
  );
  await checkArgs(facts.paths, cwd, ctx);
  return { program: real ?? word, commands, programs };
}

/**
 * Under a policy a refusal inside a wrapper refuses the call; with no policy it is noted as unseen,
 * except a fixed rule's (a path argument, the workspace root deleted), which refuses in every mode.
 */
async function nested(ctx: Ctx, fn: () => Promise<void>): Promise<void> {
  if (ctx.policy) return fn();
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof Refusal) || err instanceof FixedRuleRefusal) throw err;
    ctx.opaque.push(err.reason);
  }
}

/**
 * A planned step, planned again right before it runs: an earlier step may have made a link that now
 * leads a path argument out of the root, or put a program where a name now resolves (the plan saw
 * the disk before that). Every check of the first plan runs again; a Refusal stops the step.
 */
export async function recheckStep(step: PlannedStep, pc: PlanContext, stdin?: string): Promise<void> {
  if (step.builtin === "cd") return;
  const ctx = await makeCtx(pc, stdin);
  const again = await planCommand(step.argv, step.cwd, ctx, 0, 0, false);
  if (again.program !== step.program)
    throw new FixedRuleRefusal(
      `\`${step.argv[0]}\` now resolves to ${again.program}, not ${step.program} as planned.`,
      "Run the call again, so it is planned and decided with the program it runs.",
    );
}
