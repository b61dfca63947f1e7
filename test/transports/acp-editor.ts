// The editor side of the ACP tests: the SDK's client, with in-memory buffers for fs/* (so a test can
// tell the buffer from the disk), real processes behind terminal/*, scripted answers to
// session/request_permission, and a record of everything asked. It talks to examples/acp-agent.ts,
// spawned over a real ndjson stdio stream.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type ClientCapabilities,
  type ClientConnection,
  type RequestPermissionRequest,
} from "@agentclientprotocol/sdk";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface Term {
  child: ChildProcess;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
  exited?: { exitCode: number | null; signal: string | null };
  killed: boolean;
  released: boolean;
}

type Answer = "allow" | "reject" | "cancel";

export interface Editor {
  /** Open buffers by absolute path: what the editor shows, saved or not. */
  buffers: Map<string, string>;
  /** Paths whose fs/write_text_file the editor refuses. */
  failWrites: Set<string>;
  /**
   * The answers the person gives, in order: allow, reject, or the request is cancelled; a function
   * runs while the request is open (the person edits meanwhile, say) and gives the answer.
   */
  answers: (Answer | (() => Answer))[];
  permissions: RequestPermissionRequest[];
  terminals: Term[];
  conn: ClientConnection;
  agent: ChildProcess;
  /** Run one prompt (one JSON tool call per line); the agent's answers, parsed. */
  prompt(sessionId: string, lines: unknown[]): Promise<{ stopReason: string; results: Record<string, unknown>[] }>;
  newSession(cwd: string): Promise<string>;
  close(): Promise<void>;
}

export async function startEditor(opts: { env: NodeJS.ProcessEnv; capabilities: ClientCapabilities }): Promise<Editor> {
  const buffers = new Map<string, string>();
  const failWrites = new Set<string>();
  const answers: Editor["answers"] = [];
  const permissions: RequestPermissionRequest[] = [];
  const terminals: Term[] = [];
  const messages = new Map<string, string[]>();

  const app = client({ name: "test-editor" })
    .onRequest("fs/read_text_file", ({ params }) => {
      const text = buffers.get(params.path);
      if (text === undefined) throw RequestError.resourceNotFound(params.path);
      return { content: text };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      if (failWrites.has(params.path)) throw new RequestError(-32603, "the buffer is read-only in this editor");
      buffers.set(params.path, params.content);
      return {};
    })
    .onRequest("session/request_permission", ({ params }) => {
      permissions.push(params);
      const next = answers.shift() ?? "reject";
      const answer = typeof next === "function" ? next() : next;
      if (answer === "cancel") return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: answer === "allow" ? "allow-once" : "reject-once" } };
    })
    .onRequest("terminal/create", ({ params }) => {
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env: Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])),
        stdio: ["ignore", "pipe", "pipe"],
      });
      const term: Term = {
        child,
        output: "",
        killed: false,
        released: false,
        exit: new Promise((resolve) => {
          child.on("error", () => resolve({ exitCode: 127, signal: null }));
          child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
        }),
      };
      void term.exit.then((e) => (term.exited = e));
      child.stdout?.on("data", (b: Buffer) => (term.output += b.toString("utf8")));
      child.stderr?.on("data", (b: Buffer) => (term.output += b.toString("utf8")));
      terminals.push(term);
      return { terminalId: String(terminals.length - 1) };
    })
    .onRequest("terminal/output", ({ params }) => {
      const t = terminals[Number(params.terminalId)];
      return { output: t.output, truncated: false, exitStatus: t.exited ?? null };
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => terminals[Number(params.terminalId)].exit)
    .onRequest("terminal/kill", ({ params }) => {
      const t = terminals[Number(params.terminalId)];
      t.killed = true;
      t.child.kill("SIGKILL");
      return {};
    })
    .onRequest("terminal/release", ({ params }) => {
      const t = terminals[Number(params.terminalId)];
      t.released = true;
      if (!t.exited) t.child.kill("SIGKILL");
      return {};
    })
    .onNotification("session/update", ({ params }) => {
      if (params.update.sessionUpdate !== "agent_message_chunk" || params.update.content.type !== "text") return;
      const list = messages.get(params.sessionId) ?? [];
      list.push(params.update.content.text);
      messages.set(params.sessionId, list);
    });

  const agentProc = spawn(process.execPath, ["--import", "tsx", path.join(REPO, "examples/acp-agent.ts")], {
    cwd: REPO,
    env: opts.env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const conn = app.connect(
    ndJsonStream(
      Writable.toWeb(agentProc.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(agentProc.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  await conn.agent.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: opts.capabilities,
  });

  return {
    buffers,
    failWrites,
    answers,
    permissions,
    terminals,
    conn,
    agent: agentProc,
    async newSession(cwd) {
      const r = await conn.agent.request("session/new", { cwd, mcpServers: [] });
      return r.sessionId;
    },
    async prompt(sessionId, lines) {
      messages.set(sessionId, []);
      const text = lines.map((l) => JSON.stringify(l)).join("\n");
      const r = await conn.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      // session/update notifications may be dispatched after the prompt's response: wait for one per call.
      for (let i = 0; i < 250 && (messages.get(sessionId) ?? []).length < lines.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const results = (messages.get(sessionId) ?? []).map((m) => JSON.parse(m) as Record<string, unknown>);
      return { stopReason: r.stopReason, results };
    },
    async close() {
      conn.close();
      agentProc.stdin?.end();
      for (const t of terminals) if (!t.exited) t.child.kill("SIGKILL");
      if (agentProc.exitCode === null) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => agentProc.kill("SIGKILL"), 5000);
          agentProc.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}
