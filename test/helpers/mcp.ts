// Real MCP peers for tests: the built `latch mcp` spawned over stdio, or serving HTTP on a free port.
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { HUMAN_MIN_MS } from "../../src/transports/mcp/elicit.js";
import { CLI } from "./cli.js";

/**
 * How the test's person answers an approval form: true (allow once), false (decline), or an exact
 * elicitation result (cancel, accept with some content, allow for the session).
 */
export type ElicitAnswer = (
  message: string,
  params: Record<string, any>,
) => boolean | ElicitReply | Promise<boolean | ElicitReply>;
export type ElicitReply = { action: "accept" | "decline" | "cancel"; content?: Record<string, string> };

export function newClient(answer?: ElicitAnswer): Client {
  const client = new Client(
    { name: "latch-test", version: "1.0.0" },
    { capabilities: answer ? { elicitation: { form: {} } } : {} },
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as Record<string, any>;
      const a = await answer(String(params.message), params);
      if (typeof a !== "boolean") return a;
      if (a) return { action: "accept", content: { decision: "allow_once" } };
      // A person reads before declining: latch takes a faster decline for a headless client's (elicit.ts).
      await new Promise((r) => setTimeout(r, HUMAN_MIN_MS));
      return { action: "decline" };
    });
  }
  return client;
}

function stdioTransport(args: string[], env: Record<string, string>): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...args],
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: "pipe",
  });
}

export async function stdioClient(
  args: string[],
  answer?: ElicitAnswer,
  env: Record<string, string> = {},
): Promise<Client> {
  const client = newClient(answer);
  await client.connect(stdioTransport(args, env));
  return client;
}

export type Transport = "stdio" | "http";
export const TRANSPORTS: readonly Transport[] = ["stdio", "http"];

export interface McpSession {
  client: Client;
  /** What latch wrote to stderr so far (its log: LATCH_LOG sets the level). */
  stderr: () => string;
  /** Closes the client, and with HTTP stops the server. */
  close: () => Promise<void>;
}

/** `latch mcp ARGS` over stdio, or `latch mcp --http ARGS` with one client session: the same case over either. */
export async function connectOver(
  transport: Transport,
  args: string[],
  opts: { answer?: ElicitAnswer; env?: Record<string, string> } = {},
): Promise<McpSession> {
  if (transport === "http") {
    const server = await startHttpServer(args, undefined, opts.env);
    try {
      const client = await httpClient(server, opts.answer);
      return { client, stderr: server.stderr, close: () => client.close().then(() => server.stop()) };
    } catch (err) {
      await server.stop();
      throw err;
    }
  }
  const transportIn = stdioTransport(args, opts.env ?? {});
  let err = "";
  transportIn.stderr?.on("data", (d) => (err += d));
  const client = newClient(opts.answer);
  await client.connect(transportIn);
  return { client, stderr: () => err, close: () => client.close() };
}

export interface HttpServerProc {
  url: string;
  token: string;
  /** What the server printed on start (up to the endpoint line, and whatever followed in the same chunks). */
  banner: () => string;
  /** What the server wrote to stderr so far (its log: LATCH_LOG sets the level). */
  stderr: () => string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Start `latch mcp --http --port 0` and wait for the endpoint it prints. A null token: latch makes one. */
export function startHttpServer(
  args: string[],
  token: string | null = "test-token-" + Math.random().toString(36).slice(2),
  extraEnv: Record<string, string> = {},
): Promise<HttpServerProc> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, LATCH_TOKEN: token ?? "", ...extraEnv };
    const child = spawn(process.execPath, [CLI, "mcp", "--http", "--port", "0", ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /MCP endpoint: (\S+)/.exec(out);
      const t = /token: +(\S+)/.exec(out);
      if (m && t) {
        resolve({
          url: m[1],
          token: t[1],
          banner: () => out,
          stderr: () => err,
          child,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done();
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`latch mcp --http exited ${code}: ${err}${out}`)));
  });
}

export async function httpClient(server: HttpServerProc, answer?: ElicitAnswer): Promise<Client> {
  const client = newClient(answer);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
    }),
  );
  return client;
}

export interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
}

/** What a model is shown by a client that, like Claude Code, prefers structuredContent (serialised) when present. */
export function modelView(r: ToolResult): string {
  if (r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return r.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/** A result's fields, read back from latch's text: a JSON line, then `--- name ---` blocks shown verbatim. */
export function fieldsOf(r: ToolResult): Record<string, any> {
  const text = r.content.find((c) => c.type === "text")?.text ?? "";
  const nl = text.indexOf("\n");
  const fields = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as Record<string, any>;
  if (nl < 0) return fields;
  const parts = text.slice(nl + 1).split(/(?:^|\n)--- ([a-z_]+) ---\n/);
  for (let i = 1; i < parts.length; i += 2) fields[parts[i]] = parts[i + 1];
  return fields;
}

/** MCP's `initialize` request as a raw HTTP client sends it first. */
export const RAW_INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** One raw JSON-RPC POST to a streamable-HTTP MCP server, for tests of sessions themselves (ids, caps, expiry). */
export function rawPost(url: string, token: string, body: unknown, sid?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      ...(sid ? { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** Opens a raw session (initialize, then initialized) and returns its id; throws with the answer otherwise. */
export async function rawSession(url: string, token: string): Promise<string> {
  const r = await rawPost(url, token, RAW_INIT);
  if (r.status !== 200) throw new Error(`initialize answered ${r.status}: ${await r.text()}`);
  await r.text();
  const sid = r.headers.get("mcp-session-id")!;
  await (await rawPost(url, token, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).text();
  return sid;
}
