import { z } from "zod";
import { defineTool } from "./define.js";

const schema = z.strictObject({
  id: z.string().describe("The id local_shell {background: true} returned."),
  text: z
    .string()
    .max(1024 * 1024)
    .describe("Text written to the process's standard input (add \\n to end a line)."),
  wait_ms: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .optional()
    .describe("How long to wait for the process to take the text (default 1000)."),
});

export default defineTool({
  name: "process_input",
  aliases: ["interact_with_process"],
  toolset: "local_shell",
  // Input can make a running program do anything it can do: decided like a shell call.
  axis: "shell",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Write text to a background process's standard input (a REPL, a prompt). Then read the answer with process_output.",
    "Answers taken_bytes (what the process took) and queued_bytes (still waiting in latch); at most 1 MiB waits per process: past it the call waits wait_ms, then is refused.",
  ].join(" "),
  schema,
  plan: async () => ({}),
  async run(args, _plan, env) {
    const r = await env.background.input(env.session, args.id, args.text, args.wait_ms ?? 1000);
    return { result: { id: args.id, ...r } };
  },
});
