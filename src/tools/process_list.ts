import { z } from "zod";
import { defineTool } from "./define.js";

export default defineTool({
  name: "process_list",
  aliases: ["list_processes"],
  toolset: "local_shell",
  axis: "files.read",
  shapes: ["workspace"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description:
    "List this session's background processes: id, command, running or exit_code, and how many bytes each stream has printed.",
  schema: z.strictObject({}),
  plan: async () => ({}),
  async run(_args, _plan, env) {
    // What the sandbox's guard undid for these processes: the host adds it to the result and the log.
    env.undone?.push(...env.background.takeUndone(env.session));
    return { result: { processes: env.background.list(env.session) } };
  },
});
