// latch tools [--json]: the registry as this host offers it, with each tool's JSON Schema.
import type { Command } from "commander";
import { inputSchema } from "../registry.js";
import { exposedName } from "../gateway/names.js";
import { addHostFlags, hostFromFlags, printJson, type HostFlags } from "./options.js";

export function registerTools(program: Command): void {
  addHostFlags(program.command("tools"))
    .description("list the tools, their axes and schemas")
    .option("--json", "print JSON (with each tool's input schema)")
    .action(async (flags: HostFlags & { json?: boolean }) => {
      const host = await hostFromFlags(flags);
      const tools = host.tools();
      // Attached tools that wait for `latch servers approve` (new or changed) are not offered: named here, with why.
      const waiting = (host.gateway?.status() ?? []).flatMap((s) =>
        s.pins.filter((p) => p.state === "new" || p.state === "changed").map((p) => ({ server: s.name, ...p })),
      );
      await host.shutdown("latch tools is done");
      const pin = (t: (typeof tools)[number]) => (t.axis === "attached" ? { pin: "pinned" } : {});
      if (flags.json) {
        printJson([
          ...tools.map((t) => ({
            name: t.name,
            aliases: t.aliases,
            toolset: t.toolset,
            axis: t.axis,
            description: t.description,
            annotations: t.annotations,
            inputSchema: inputSchema(t),
            ...pin(t),
          })),
          ...waiting.map((w) => ({
            name: exposedName(w.server, w.tool),
            axis: "attached",
            offered: false,
            pin: w.state,
          })),
        ]);
        return;
      }
      const width = tools.reduce((w, t) => Math.max(w, t.name.length), -Infinity);
      for (const t of tools) {
        const first = t.description.split(/(?<=\.)\s/)[0];
        const pinned = t.axis === "attached" ? "[pinned] " : "";
        process.stdout.write(`${t.name.padEnd(width)}  ${t.axis.padEnd(11)}  ${pinned}${first}\n`);
      }
      for (const w of waiting)
        process.stdout.write(
          `${exposedName(w.server, w.tool)}  not offered: ${w.state === "new" ? "new" : "changed"}, waiting for \`latch servers approve ${w.server}\`\n`,
        );
    });
}
