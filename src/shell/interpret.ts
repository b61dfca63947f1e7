// The step interpreter: runs a plan's steps in order with their sh meaning (&&, ||, ;), does `cd`
// itself, and spawns every other step with its literal argv in its planned cwd, with no shell in
// between. One time budget and one pair of bounded output streams serve the whole call.
import { stat } from "node:fs/promises";
import { Refusal } from "../errors.js";
import type { CallContainment } from "../sandbox/call.js";
import type { InputFeed } from "../process/input-feed.js";
import { HeadTailCapture, type Captured, type Sink } from "../process/capture.js";
import { LOCAL_PROCESSES, type ProcessBackend } from "../process/backend.js";
import { exitStatus } from "../process/exec.js";
import type { ExecNode, PlannedStep, ShellPlan } from "./plan.js";

interface StepReport {
  argv: string[];
  cwd: string;
  exit_code?: number | null;
  /** The signal that ended the step's program (its exit_code is then 128+n, as sh says). */
  signal?: NodeJS.Signals;
  skipped?: true;
}

export interface ShellRun {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  steps: StepReport[];
  timed_out: boolean;
  cancelled: boolean;
  truncated: { stdout: number; stderr: number };
  binary_output: boolean;
  duration_ms: number;
  /** A step refused by the check right before it ran (a path argument that now leads out); no later step ran. */
  refused?: { step: number; reason: string };
}

/** Where a run's output goes: by default bounded head-and-tail captures; background runs bring their own. */
export interface OutputSink extends Sink {
  result(): Captured;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  stdin?: string | InputFeed;
  /** Background processes (src/shell/background.ts) read their output while it runs. */
  output?: { stdout: OutputSink; stderr: OutputSink };
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
  /** Every step's process runs under this containment. */
  sandbox?: CallContainment;
  /** Where the steps run: this machine (default) or an ACP client's terminals. */
  processes?: ProcessBackend;
  onStep?(index: number, step: PlannedStep): void;
  /** Checks a step right before it runs; a Refusal stops the run there (that step and the rest do not run). */
  beforeStep?(step: PlannedStep): Promise<void>;
}

export async function runShellPlan(plan: ShellPlan, opts: RunOptions): Promise<ShellRun> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  const stdout = opts.output?.stdout ?? new HeadTailCapture(opts.maxOutputBytes, "stdout");
  const stderr = opts.output?.stderr ?? new HeadTailCapture(opts.maxOutputBytes, "stderr");
  const reports: StepReport[] = plan.steps.map((s) => ({ argv: s.argv, cwd: s.cwd }));
  let timedOut = false;
  let cancelled = false;
  let stdinUsed = false;
  let last: number | null = 0;
  let refused: { step: number; reason: string } | undefined;

  const runStep = async (index: number): Promise<number | null> => {
    const step = plan.steps[index];
    if (refused === undefined && opts.beforeStep) {
      try {
        await opts.beforeStep(step);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        refused = { step: index, reason: err.reason };
        stderr.write(
          Buffer.from(
            `latch: step ${index + 1} (\`${step.argv.join(" ").slice(0, 200)}\`) was refused before it ran: ${err.reason}\n`,
          ),
        );
        last = 126;
      }
    }
    if (refused !== undefined || timedOut || cancelled || opts.signal.aborted || Date.now() >= deadline) {
      if (refused !== undefined) {
        reports[index].skipped = true;
        return last;
      }
      if (opts.signal.aborted) cancelled = true;
      else if (!cancelled) timedOut = true;
      reports[index].skipped = true;
      return last;
    }
    opts.onStep?.(index, step);
    let code: number | null;
    if (step.builtin === "cd") {
      const st = await stat(step.target ?? step.cwd).catch(() => undefined); // a missing folder is exit 1, as in sh
      code = st?.isDirectory() ? 0 : 1;
      if (code !== 0) stderr.write(Buffer.from(`cd: ${step.argv[1]}: No such folder\n`));
    } else {
      const useStdin = !stdinUsed && opts.stdin !== undefined;
      stdinUsed = true;
      const o = await (opts.processes ?? LOCAL_PROCESSES).run({
        file: step.program,
        argv0: step.argv[0],
        args: step.argv.slice(1),
        cwd: step.cwd,
        env: opts.env,
        stdin: useStdin ? opts.stdin : undefined,
        deadline,
        signal: opts.signal,
        stdout,
        stderr,
        sandbox: opts.sandbox,
      });
      if (o.timedOut) timedOut = true;
      if (o.cancelled) cancelled = true;
      if (o.spawnError !== undefined) {
        const notFound = o.spawnError.startsWith("ENOENT");
        stderr.write(Buffer.from(`latch: cannot run \`${step.argv[0]}\` in ${step.cwd}: ${o.spawnError}\n`));
        code = notFound ? 127 : 126;
      } else code = exitStatus(o);
      if (o.signal) reports[index].signal = o.signal;
    }
    reports[index].exit_code = code;
    last = code;
    return code;
  };

  const skipAll = (node: ExecNode): void => {
    if (node.kind === "step") reports[node.index].skipped = true;
    else {
      skipAll(node.left);
      skipAll(node.right);
    }
  };

  const runNode = async (node: ExecNode): Promise<number | null> => {
    if (node.kind === "step") return runStep(node.index);
    const left = await runNode(node.left);
    const go = node.kind === "and" ? left === 0 : left !== 0;
    if (!go) {
      skipAll(node.right);
      return left;
    }
    return runNode(node.right);
  };

  for (const node of plan.sequence) await runNode(node);
  const out = stdout.result();
  const err = stderr.result();
  return {
    exit_code: last,
    stdout: out.text,
    stderr: err.text,
    steps: reports,
    timed_out: timedOut,
    cancelled,
    truncated: { stdout: out.cut, stderr: err.cut },
    binary_output: out.invalidUtf8 || err.invalidUtf8,
    duration_ms: Date.now() - started,
    ...(refused ? { refused } : {}),
  };
}
