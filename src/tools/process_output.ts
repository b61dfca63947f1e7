import { z } from "zod";
import { defineTool } from "./define.js";

const schema = () =>
  z.strictObject({
    id: z.string().describe("The id local_shell {background: true} returned."),
    since: z.number().int().min(0).optional().describe("stdout from this byte on: the `stdout.to` of your last read."),
    since_stderr: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("stderr from this byte on: the `stderr.to` of your last read."),
  });

export default defineTool({
  name: "process_output",
  aliases: ["read_process_output"],
  toolset: "local_shell",
  // Only this session's own processes are read: what the shell call that started them already allowed.
  axis: "shell",
  shapes: ["workspace"],
  annotations: { readOnly: true, destructive: false, idempotent: false },
  description: [
    "Read a background process's output: stdout and stderr from the byte offsets you pass (`since`, `since_stderr`; default 0), and whether it still runs (else its exit_code).",
    "Each stream keeps its first 16 KiB and last 256 KiB; `dropped` says how many bytes were lost between. Pass back `to` as the next since.",
  ].join(" "),
  schema,
  resultBudget: (env) => 2 * env.settings.local_shell.maxOutputBytes,
  plan: async () => ({}),
  async run(args, _plan, env) {
    const max = env.settings.local_shell.maxOutputBytes * 2;
    const since = { stdout: args.since ?? 0, stderr: args.since_stderr ?? 0 };
    const result = env.background.output(env.session, args.id, since, max);
    // What the sandbox's guard undid for this process: the host adds it to the result and the log.
    if (env.undone) for (const u of env.background.takeUndone(env.session, args.id)) env.undone.push(u);
    return { result };
  },
});
