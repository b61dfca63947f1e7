// tools/list's answer, without the MCP SDK (its types only): the registry's tools the envelope does
// not deny outright, each as MCP describes a tool, the skill tool's description carrying the skills
// found. Both the SDK's handler (server.ts) and the stdio server's early answer (early.ts) send it.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { deniedOutright } from "../../policy/outright.js";
import { inputSchema } from "../../registry.js";
import type { ToolSpec } from "../../tools/define.js";

/** The skill index appended to the skill tool's description stays within this many characters. */
export const DESCRIPTION_INDEX_CHARS = 4000;

export interface Listed {
  skills: { name: string; description: string }[];
  truncated?: boolean;
  shadowed?: { name: string; dir: string; reason: string }[];
}

/** The tools the client is offered now. */
export async function listTools(host: Host, session: string): Promise<Tool[]> {
  // A tool the envelope denies whatever its arguments is not listed: the model would only waste calls on it.
  const usable = host.tools().filter((t) => !deniedOutright(host.envelope, t));
  return withSkillIndex(host, session, usable.map(describeTool));
}

export async function listSkills(host: Host, session: string): Promise<Listed | undefined> {
  // As tools/list: a skill tool the envelope denies outright is not offered, so not called (and logged) either.
  if (!host.tools().some((t) => t.name === "skill" && !deniedOutright(host.envelope, t))) return undefined;
  // No skill folder at all: the index is empty, without a whole policy call (tools/list at every start).
  if (!host.mayHoldSkills()) return { skills: [] };
  const out = await host.call("skill", {}, { session });
  return out.status === "ok" ? (out.result as Listed) : undefined;
}

/** tools/list: the skill tool's description gains the skills found (bounded), so the model knows them. */
export async function withSkillIndex(host: Host, session: string, tools: Tool[]): Promise<Tool[]> {
  const i = tools.findIndex((t) => t.name === "skill");
  if (i === -1) return tools;
  const listed = await listSkills(host, session);
  if (!listed || listed.skills.length === 0) return tools;
  let index = "\nSkills found:";
  let shown = 0;
  for (const s of listed.skills) {
    const line = `\n- ${s.name}: ${s.description}`;
    if (index.length + line.length > DESCRIPTION_INDEX_CHARS) break;
    index += line;
    shown++;
  }
  if (shown < listed.skills.length || listed.truncated) index += "\n(more: call skill with no name to list them all)";
  for (const x of listed.shadowed ?? []) {
    const line = `\n(shadowed: the workspace skill ${x.name} in ${x.dir} is left out: ${x.reason})`;
    if (index.length + line.length > DESCRIPTION_INDEX_CHARS) break;
    index += line;
  }
  const out = [...tools];
  out[i] = { ...tools[i], description: `${tools[i].description}${index}` };
  return out;
}

function describeTool(t: ToolSpec): Tool {
  return {
    name: t.name,
    description: t.description,
    inputSchema: inputSchema(t) as Tool["inputSchema"],
    ...(t.outputSchema ? { outputSchema: t.outputSchema as Tool["outputSchema"] } : {}),
    annotations: {
      title: t.name,
      readOnlyHint: t.annotations.readOnly,
      destructiveHint: t.annotations.destructive,
      idempotentHint: t.annotations.idempotent,
      openWorldHint: false,
    },
  };
}
