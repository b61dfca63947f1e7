// Skills offered as MCP prompts (prompts/list, prompts/get), so clients can show them (the skill tool's
// description lists them too: tool-list.ts). Everything goes through host.call("skill", …):
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
} from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { listSkills } from "./tool-list.js";

export function serveSkillPrompts(server: Server, hostReady: Promise<Host>, session: string): void {
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
