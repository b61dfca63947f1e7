import { z } from "zod";
import { defineTool } from "./define.js";

export default defineTool({
  name: "process_list",
  aliases: ["list_processes"],
  toolset: "local_shell",
  axis: "shell",
  shapes: ["workspace"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description:
    "List this session's background processes: id, command, running or exit_code, how many bytes each stream has printed and how much input waits. Finished runs are kept 10 min, the newest 16; `evicted` says how many were let go.",
  schema: () => z.strictObject({}),
  plan: async () => ({}),
  async run(_args, _plan, env) {
    // What the sandbox's guard undid for these processes: the host adds it to the result and the log.
    if (env.undone) for (const u of env.background.takeUndone(env.session)) env.undone.push(u);
    return { result: env.background.list(env.session) };
  },
});
