// latch tools [--json]: the registry as this host offers it, with each tool's JSON Schema.
import type { Command } from "commander";
import { inputSchema } from "../registry.js";
import { addHostFlags, hostFromFlags, printJson, type HostFlags } from "./options.js";

export function registerTools(program: Command): void {
  addHostFlags(program.command("tools"))
    .description("list the tools, their axes and schemas")
    .option("--json", "print JSON (with each tool's input schema)")
    .action(async (flags: HostFlags & { json?: boolean }) => {
      const host = await hostFromFlags(flags);
      const tools = host.tools();
      host.close();
      if (flags.json) {
        printJson(
          tools.map((t) => ({
            name: t.name,
            aliases: t.aliases,
            toolset: t.toolset,
            axis: t.axis,
            description: t.description,
            annotations: t.annotations,
            inputSchema: inputSchema(t),
          })),
        );
        return;
      }
      const width = Math.max(...tools.map((t) => t.name.length));
      for (const t of tools) {
        const first = t.description.split(/(?<=\.)\s/)[0];
        process.stdout.write(`${t.name.padEnd(width)}  ${t.axis.padEnd(11)}  ${first}\n`);
      }
    });
}
