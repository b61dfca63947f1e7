// A runnable ACP agent that takes latch as its tool layer, in the client shape: every read and write
// goes through the editor's fs/*, every command through its terminal/*, every approval through its
// session/request_permission. The "model" is scripted: each line of a prompt is one tool call,
//   {"tool": "read_file", "args": {"path": "src/a.ts"}}
// and the agent answers each with the call's result as JSON, in an agent_message_chunk. Replace
// `scriptedModel` with a real model's tool calls; nothing else changes.
//
//   node --import tsx examples/acp-agent.ts        (speaks ACP over stdin/stdout)
//
// Environment: LATCH_STATE_DIR (where latch keeps its state), LATCH_CONFIG (agents.toml),
// LATCH_ENVELOPE (the envelope, default auto_edit).
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { agent, ndJsonStream, PROTOCOL_VERSION, type ClientCapabilities } from "@agentclientprotocol/sdk";
import { acpClient, createHost, type Host } from "../src/index.js";

interface Session {
  host: Host;
  running?: AbortController;
}

const sessions = new Map<string, Session>();
let capabilities: ClientCapabilities | undefined;

const app = agent({ name: "latch-example-agent" })
  .onRequest("initialize", ({ params }) => {
    capabilities = params.clientCapabilities;
    return { protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: false } };
  })
  .onRequest("session/new", async ({ params }) => {
    const sessionId = randomUUID();
    const host = await createHost({
      root: params.cwd,
      shape: "client",
      acp: acpClient(connection.client, sessionId, capabilities),
      envelope: process.env.LATCH_ENVELOPE,
    });
    sessions.set(sessionId, { host });
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw new Error(`unknown session ${params.sessionId}`);
    const ctl = new AbortController();
    session.running = ctl;
    try {
      const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("\n");
      for (const call of scriptedModel(text)) {
        if (ctl.signal.aborted) return { stopReason: "cancelled" };
        const result = await session.host.call(call.tool, call.args, { session: params.sessionId, signal: ctl.signal });
        await connection.client.notify("session/update", {
          sessionId: params.sessionId,
          update: {
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: JSON.stringify({ tool: call.tool, ...result }) },
          },
        });
      }
      return { stopReason: ctl.signal.aborted ? "cancelled" : "end_turn" };
    } finally {
      session.running = undefined;
    }
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.running?.abort();
  });

/** The scripted model: one JSON tool call per non-empty line. */
function scriptedModel(text: string): { tool: string; args: unknown }[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { tool: string; args: unknown });
}

const connection = app.connect(
  ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  ),
);
void connection.closed.finally(() => {
  for (const s of sessions.values()) s.host.close();
});
