import { z } from "zod";
import type { LocalShellSettings } from "../config/toolsets.js";
import { ToolError, expected } from "../errors.js";
import { containmentReport } from "../sandbox/call.js";
import { shellEnvironment } from "../process/environment.js";
import { BACKGROUND_DEFAULT_MS } from "../shell/background.js";
import { runShellPlan } from "../shell/interpret.js";
import { planShellCall, recheckStep, type PlanContext, type ShellPlan } from "../shell/plan.js";
import { callContainmentOf, defineTool, type ToolEnv } from "./define.js";
import type { CallContainment } from "../sandbox/call.js";

const MAX_STDIN_BYTES = 1024 * 1024;

const schema = () =>
  z.strictObject({
    command: z
      .string()
      .min(1)
      .describe("A command line (`git status && git diff --stat`), or, with `args`, one program name or path."),
    args: z
      .array(z.string())
      .max(4096)
      .optional()
      .describe("The program's arguments; given, `command` runs directly with exactly these, no shell."),
    cwd: z.string().optional().describe("Folder to start in, relative to the workspace root (default: the root)."),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Stop the whole call after this many milliseconds (default and maximum are set by the user)."),
    shell: z.boolean().optional().describe("Hand the line to /bin/sh unparsed. Only without a local_shell policy."),
    stdin: z
      .string()
      .optional()
      .describe("Text for the first program's standard input (at most 1 MiB); otherwise stdin is empty."),
    background: z
      .boolean()
      .optional()
      .describe(
        "Start it and return an id at once (a dev server, a long build); read it with process_output, stop it with process_kill.",
      ),
  });

export default defineTool({
  name: "local_shell",
  aliases: ["shell", "bash"],
  toolset: "local_shell",
  // stdout and stderr are each capped (head and tail kept) by the process layer; let both through whole.
  resultBudget: (env) => 2 * env.settings.local_shell.maxOutputBytes,
  axis: "shell",
  startsProcesses: true,
  shapes: ["workspace", "client"],
  clientNeeds: ["terminal"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Run commands on this machine in the workspace. The line is parsed with the POSIX sh grammar and run by latch step by step:",
    "plain words, single or double quotes, and && , || , ; or newlines between commands; `cd DIR` moves the later steps.",
    "Pipes, redirections, globs, $VAR, $(…), backticks, escapes, &, !, VAR=x prefixes, if/for/while/case, ( ) and { } groups, ~ and brace expansion are refused:",
    "make such a part its own call, quote patterns ('*.ts') so programs like find get them literally, and use read_file/grep instead of cat/grep pipelines.",
    "Output is capped per stream (head and tail kept); the result has exit_code, stdout, stderr and each step's exit code.",
    "background: true starts it and returns an id at once (process_output, process_input, process_kill, process_list; at most 8 per session; all end with the session).",
  ].join(" "),
  schema,
  async plan(args, env): Promise<ShellPlan> {
    const settings = env.settings.local_shell;
    if (args.stdin !== undefined && Buffer.byteLength(args.stdin) > MAX_STDIN_BYTES) {
      throw new ToolError(
        "ETOOLARGE",
        expected("stdin", `at most ${MAX_STDIN_BYTES} bytes`, `${Buffer.byteLength(args.stdin)} bytes`),
      );
    }
    if (args.timeout_ms !== undefined && args.timeout_ms > settings.maxTimeoutMs) {
      throw new ToolError(
        "EINVAL",
        expected(
          "timeout_ms",
          `at most ${settings.maxTimeoutMs} (tools_policies.local_shell._max_timeout)`,
          args.timeout_ms,
        ),
      );
    }
    return planShellCall(args, planContext(env, settings));
  },
  async run(args, plan, env) {
    const settings = env.settings.local_shell;
    const sandbox = callContainmentOf(env);
    if (args.background) return startBackground(args, plan, env, settings, sandbox);
    const run = await runShellPlan(plan, {
      env: shellEnvironment(env.startupEnv, settings.envDeny, env.startupPath, settings.envAllow),
      stdin: args.stdin,
      timeoutMs: args.timeout_ms ?? settings.timeoutMs,
      maxOutputBytes: settings.maxOutputBytes,
      signal: env.signal,
      sandbox,
      // A parsed plan's path arguments are checked again right before each step (links made meanwhile).
      beforeStep:
        plan.raw === undefined ? (step) => recheckStep(step, planContext(env, settings), args.stdin) : undefined,
      processes: env.processes,
      onStep: (i, step) =>
        env.progress({ progress: i, total: plan.steps.length, message: step.argv.join(" ").slice(0, 200) }),
    });
    const result = { ...run, ...containmentReport(sandbox, run) };
    return { result, display: { steps: plan.steps.length, duration_ms: run.duration_ms } };
  },
});

function planContext(env: ToolEnv, settings: LocalShellSettings): PlanContext {
  return {
    root: env.root,
    settings,
    startupPath: env.startupPath,
    controlPlane: env.controlPlane,
    userHome: env.startupEnv.HOME,
    contained: env.sandbox?.contained ?? false,
    resolve: (p) => env.resolve(p),
  };
}

/** `background: true`: the same plan, containment and checks, started and left running (src/shell/background.ts). */
function startBackground(
  args: { command: string; args?: string[]; stdin?: string; timeout_ms?: number },
  plan: ShellPlan,
  env: ToolEnv,
  settings: LocalShellSettings,
  sandbox: CallContainment,
) {
  if (env.processes.kind !== "local")
    throw new ToolError("EUNSUPPORTED", "Background processes run on this machine only, not in a client's terminals.");
  if (args.stdin !== undefined)
    throw new ToolError("EINVAL", "A background process takes its input from process_input, not `stdin`.");
  const id = env.background.start(env.session, [args.command, ...(args.args ?? [])].join(" ").slice(0, 200), plan, {
    env: shellEnvironment(env.startupEnv, settings.envDeny, env.startupPath, settings.envAllow),
    timeoutMs: args.timeout_ms ?? BACKGROUND_DEFAULT_MS,
    maxOutputBytes: settings.maxOutputBytes,
    sandbox,
    beforeStep: plan.raw === undefined ? (step) => recheckStep(step, planContext(env, settings)) : undefined,
    processes: env.processes,
  });
  return {
    result: {
      id,
      background: true,
      ...containmentReport(sandbox),
      note: `Started. Read its output with process_output {"id": "${id}"}; stop it with process_kill. It ends when this session does.`,
    },
  };
}
