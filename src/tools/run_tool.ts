import { z } from "zod";
import { NO_SHELL_POLICY } from "../config/toolsets.js";
import { Refusal, ToolError, expected } from "../errors.js";
import { containmentReport } from "../sandbox/call.js";
import { StrictCapture } from "../process/capture.js";
import { TOOL_ID, approvedDirs, resolveCatalogTool, type CatalogProgram } from "../shell/catalog.js";
import { catalogEnvironment } from "../process/environment.js";
import { runBounded } from "../process/exec.js";
import { planShellCall, recheckStep, type PlanContext } from "../shell/plan.js";
import { describeCommand, type CommandInfo } from "../shell/programs/command.js";
import { unionCapabilities } from "../shell/programs/index.js";
import { resolveProgramSync } from "../shell/resolve.js";
import { isInside } from "../fs/paths.js";
import type { Capabilities, PlannedEffect } from "../policy/effect.js";
import { callContainmentOf, defineTool, type ToolEnv } from "./define.js";

const MAX_ARG_BYTES = 4096;
const MAX_TOTAL_BYTES = 16 * 1024;

const schema = () =>
  z.strictObject({
    tool_id: z.string().min(1).max(128).describe("A program's simple name, such as `ls` or `rg`; never a path."),
    arguments: z.array(z.string()).max(64).describe("The program's arguments, passed as they are (no shell)."),
  });

interface RunToolPlan extends PlannedEffect {
  steps: { argv: string[]; cwd: string; program: string; capabilities: Capabilities }[];
  commands: string[][];
  programs: CommandInfo[];
  capabilities: Capabilities;
  executable: CatalogProgram;
}

/** run_tool plans, and checks again before the spawn, as local_shell does with no shell policy. */
function plannerContext(env: ToolEnv): PlanContext {
  return {
    root: env.root,
    settings: NO_SHELL_POLICY,
    startupPath: env.startupPath,
    controlPlane: env.controlPlane,
    userHome: env.startupEnv.HOME,
    contained: env.sandbox?.contained ?? false,
    resolve: (p) => env.resolve(p),
  };
}

export default defineTool({
  name: "run_tool",
  aliases: [],
  toolset: "catalog",
  resultBudget: (env) => 2 * env.settings.catalog.maxStreamBytes,
  axis: "shell",
  startsProcesses: true,
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Run one program from the user's catalog by its simple name with an argument list (no shell: no pipes, globs or variables).",
    "It runs in the workspace root with a clean environment and no stdin. Output over the limit, a timeout, a crash or output that is not UTF-8 withholds all output;",
    "a nonzero exit code is a normal result.",
  ].join(" "),
  schema,
  enabled: (settings) => settings.catalog.tools !== undefined,
  async plan(args, env): Promise<RunToolPlan> {
    if (!TOOL_ID.test(args.tool_id) || args.tool_id === "." || args.tool_id === "..") {
      throw new ToolError(
        "EINVAL",
        expected("tool_id", "a simple program name of A-Z, a-z, 0-9, _ . + - (not a path)", args.tool_id),
      );
    }
    let total = 0;
    for (const [i, a] of args.arguments.entries()) {
      const n = Buffer.byteLength(a);
      total += n;
      if (n > MAX_ARG_BYTES)
        throw new ToolError("EINVAL", expected(`arguments[${i}]`, `at most ${MAX_ARG_BYTES} bytes`, `${n} bytes`));
      if (a.includes("\0"))
        throw new ToolError("EINVAL", expected(`arguments[${i}]`, "free of NUL bytes", a.replace(/\0/g, "\\0")));
    }
    if (total > MAX_TOTAL_BYTES)
      throw new ToolError("EINVAL", expected("arguments", `at most ${MAX_TOTAL_BYTES} bytes in all`, `${total} bytes`));
    const settings = env.settings.catalog;
    if (settings.tools === undefined)
      throw new Refusal(
        "run_tool has no catalog: tools_policies.catalog._tools is not set.",
        "Ask the user to list the programs you may run.",
      );
    if (settings.tools !== "*" && !settings.tools.includes(args.tool_id)) {
      throw new Refusal(
        `\`${args.tool_id}\` is not in the catalog (tools_policies.catalog._tools: ${settings.tools.join(", ")}).`,
        "Use one of the listed tools.",
      );
    }
    const executable = await resolveCatalogTool(args.tool_id, env.root, env.startupPath);
    const onPath = resolveProgramSync(args.tool_id, "/", env.startupPath);
    if (settings.tools !== "*" && isInside(env.root, executable.path) && onPath !== undefined) {
      // The catalog names the program the PATH has; a workspace file of the same name is another program.
      throw new Refusal(
        `\`${args.tool_id}\` resolves to ${executable.path} in the workspace, not to ${onPath} on the PATH that the catalog's \`${args.tool_id}\` names.`,
        'Rename or remove the workspace file, or ask the user to set _tools = "*" to run workspace programs.',
      );
    }
    const argv = [args.tool_id, ...args.arguments];
    // The same planner as local_shell's (no shell policy): wrappers' inner commands, the program tables'
    // capabilities, the argument checks, and the program known by its canonical path.
    const planned = await planShellCall({ command: executable.path, args: args.arguments }, plannerContext(env));
    // The program itself is described by the name it was asked for, and known by its canonical path
    // when it is a workspace file (never by the bare name an allowlist may hold).
    const self = describeCommand(argv, executable.path, {
      root: env.root,
      cwd: env.root,
      startupPath: env.startupPath,
    });
    const commands = planned.commands.map((c, i) => (i === 0 ? argv : c));
    const programs = planned.programs.map((p, i) => (i === 0 ? self.info : p));
    const capabilities = unionCapabilities(programs.map((p) => p.capabilities));
    return {
      steps: [{ argv, cwd: env.root, program: executable.path, capabilities }],
      commands,
      programs,
      capabilities,
      executable,
    };
  },
  async run(args, plan, env) {
    const settings = env.settings.catalog;
    const stdout = new StrictCapture(settings.maxStreamBytes);
    const stderr = new StrictCapture(settings.maxStreamBytes);
    const sandbox = callContainmentOf(env);
    // The path arguments again, right before the process starts (a link may have changed since the plan).
    await recheckStep({ ...plan.steps[0], argv: [plan.executable.path, ...args.arguments] }, plannerContext(env));
    const o = await runBounded({
      file: plan.executable.path,
      argv0: args.tool_id,
      args: args.arguments,
      cwd: env.root,
      env: catalogEnvironment(await approvedDirs(env.startupPath)),
      deadline: Date.now() + settings.timeoutMs,
      signal: env.signal,
      stdout,
      stderr,
      sandbox,
    });
    const name = `\`${args.tool_id}\``;
    if (o.spawnError !== undefined) throw new ToolError("ESPAWN", `${name} could not be started (${o.spawnError}).`);
    if (o.cancelled) throw new ToolError("ECANCELED", `${name} was cancelled; its output is withheld.`);
    if (o.overLimit) {
      throw new ToolError(
        "ETOOLARGE",
        `${name} wrote more than ${settings.maxStreamBytes} bytes to ${stdout.over ? "stdout" : "stderr"} (tools_policies.catalog._max_stream_bytes), so all output is withheld. Ask for less output (a narrower query or a limit option).`,
      );
    }
    if (o.timedOut)
      throw new ToolError(
        "ETIMEDOUT",
        `${name} ran past ${settings.timeoutMs} ms (tools_policies.catalog._timeout) and was stopped; all output is withheld. Ask for less work per call.`,
      );
    if (o.exitCode === null)
      throw new ToolError(
        "ESIGNAL",
        `${name} ended abnormally (signal ${o.signal ?? "unknown"}); all output is withheld.`,
      );
    const out = stdout.result();
    const err = stderr.result();
    if (out.invalidUtf8 || err.invalidUtf8) {
      throw new ToolError(
        "EENCODING",
        `${name} wrote ${out.invalidUtf8 ? "stdout" : "stderr"} that is not valid UTF-8, so all output is withheld. Ask for a text format.`,
      );
    }
    return {
      result: {
        exit_code: o.exitCode,
        stdout: out.text,
        stderr: err.text,
        executable: {
          path: plan.executable.path,
          sha256: plan.executable.sha256,
          profile: "local-path",
          os_containment: sandbox.contained,
        },
        ...containmentReport(sandbox, { exit_code: o.exitCode, stdout: out.text, stderr: err.text }),
      },
    };
  },
});
