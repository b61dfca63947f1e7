import { z } from "zod";
import { defineTool } from "./define.js";

const schema = () => z.strictObject({ id: z.string().describe("The id local_shell {background: true} returned.") });

export default defineTool({
  name: "process_kill",
  aliases: ["kill_process"],
  toolset: "local_shell",
  // Stopping this session's own process only takes away an effect: no approval to ask for.
  axis: "shell",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: false, idempotent: true },
  description:
    "Stop a background process and everything it started (SIGTERM, then SIGKILL after 2 s); returns when all of it is gone, with its exit status and last output.",
  schema,
  plan: async () => ({}),
  async run(args, _plan, env) {
    const run = await env.background.kill(env.session, args.id);
    return { result: { id: args.id, stopped: true, exit_code: run.exit_code, steps: run.steps } };
  },
});
