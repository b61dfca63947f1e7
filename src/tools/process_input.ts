import { z } from "zod";
import { defineTool } from "./define.js";

/**
 * The most text one call sends (UTF-16 units, as zod counts). Small enough that every copy of it on
 * the call path (the parse, the log's hash, the disclosure scan, the bytes queued) is an ordinary
 * young object the scavenger frees at once: past 128 KiB each copy would be a large object, kept
 * until V8's next full collection. The per-process queue (1 MiB) takes many calls' worth.
 */
const MAX_TEXT = 64 * 1024;

const schema = () =>
  z.strictObject({
    id: z.string().max(64).describe("The id local_shell {background: true} returned."),
    text: z
      .string()
      .max(MAX_TEXT)
      .describe("Text written to the process's standard input (add \\n to end a line); at most 64 Ki characters."),
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
    "Send longer text in several calls.",
  ].join(" "),
  schema,
  // Every character escaped (`\u0000`, 6 bytes), and room for the id, wait_ms and spacing.
  argumentLimit: {
    bytes: 6 * MAX_TEXT + 4096,
    fix: "Send at most 64 Ki characters of text per process_input call, the rest in later calls, each once the process took the last (taken_bytes).",
  },
  plan: async () => ({}),
  async run(args, _plan, env) {
    const r = await env.background.input(env.session, args.id, args.text, args.wait_ms ?? 1000);
    return { result: { id: args.id, ...r } };
  },
});
