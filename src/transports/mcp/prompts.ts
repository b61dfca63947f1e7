// Skills offered as MCP prompts (prompts/list, prompts/get), so clients can show them, and the skill
// tool's description extended with the skills found. Everything goes through host.call("skill", …):
// the same discovery, containment, envelope and policy log as the model's own calls; only where no
// skill folder exists is the empty answer known without one.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
  type GetPromptResult,
  type Prompt,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { deniedOutright } from "../../policy/outright.js";

/** The skill index appended to the skill tool's description stays within this many characters. */
export const DESCRIPTION_INDEX_CHARS = 4000;

interface Listed {
  skills: { name: string; description: string }[];
  truncated?: boolean;
  shadowed?: { name: string; dir: string; reason: string }[];
}

async function listSkills(host: Host, session: string): Promise<Listed | undefined> {
  // As tools/list: a skill tool the envelope denies outright is not offered, so not called (and logged) either.
  if (!host.tools().some((t) => t.name === "skill" && !deniedOutright(host.envelope, t))) return undefined;
  // No skill folder at all: the index is empty, without a whole policy call (tools/list at every start).
  if (!host.mayHoldSkills()) return { skills: [] };
  const out = await host.call("skill", {}, { session });
  return out.status === "ok" ? (out.result as Listed) : undefined;
}

export function serveSkillPrompts(server: Server, hostReady: Promise<Host>, session: string): void {
  server.registerCapabilities({ prompts: { listChanged: false } });
  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const listed = await listSkills(await hostReady, session);
    const prompts: Prompt[] = (listed?.skills ?? []).map((s) => ({ name: s.name, description: s.description }));
    return { prompts };
  });
  server.setRequestHandler(GetPromptRequestSchema, async (req, extra): Promise<GetPromptResult> => {
    const host = await hostReady;
    const out = await host.call("skill", { name: req.params.name }, { session, signal: extra.signal });
    if (out.status === "refused") throw new McpError(ErrorCode.InvalidParams, `Refused: ${out.reason}`);
    if (out.status === "error") throw new McpError(ErrorCode.InvalidParams, `${out.code}: ${out.message}`);
    const r = out.result as { content: string; next_offset?: number; files?: string[] };
    const more =
      r.next_offset === undefined
        ? ""
        : `\n\n[SKILL.md goes on: call the skill tool with {"name": "${req.params.name}", "offset": ${r.next_offset}}.]`;
    const files = r.files?.length
      ? `\n\n[Files in this skill, readable with the skill tool: ${r.files.join(", ")}]`
      : "";
    return {
      description: `The skill ${req.params.name}`,
      messages: [{ role: "user", content: { type: "text", text: r.content + more + files } }],
    };
  });
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
