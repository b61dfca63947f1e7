// latch mcp --http: streamable HTTP with sessions. Every request must carry the bearer token; Host and
// Origin are checked against DNS rebinding; each MCP session is its own ledger session. Checks run
// before the MCP transport sees the request, so a rejected request runs nothing.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { log } from "../log.js";
import { createMcpSession } from "./server.js";

export interface HttpOptions {
  host: Host;
  bind: string;
  port: number;
  token: string;
  /** `--yes`: the host's approver decides; clients are never asked. */
  approveAll?: boolean;
  /** Extra Host header values to accept (the bound name is always accepted). */
  allowedHosts?: string[];
}

export interface HttpHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 16 << 20;

export function isLoopback(addr: string): boolean {
  return addr === "localhost" || addr === "::1" || addr === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(addr);
}

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export async function serveHttp(opts: HttpOptions): Promise<HttpHandle> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = opts.port;
  const hostOk = (h: string | undefined) => {
    if (!h) return false;
    const names = new Set([
      "127.0.0.1",
      "localhost",
      "[::1]",
      opts.bind.includes(":") ? `[${opts.bind}]` : opts.bind,
      ...(opts.allowedHosts ?? []),
    ]);
    return [...names].some((n) => h === `${n}:${port}` || h === n);
  };
  const originOk = (o: string | undefined) => {
    if (o === undefined) return true; // not a browser: no Origin to check
    try {
      const u = new URL(o);
      return (u.protocol === "http:" || u.protocol === "https:") && hostOk(u.host);
    } catch {
      return false;
    }
  };
  const expected = Buffer.from(`Bearer ${opts.token}`);
  const tokenOk = (auth: string | undefined) => {
    const got = Buffer.from(auth ?? "");
    return got.length === expected.length && timingSafeEqual(got, expected);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!hostOk(req.headers.host)) return reject(res, 403, "forbidden Host header (DNS rebinding protection)");
    if (!originOk(req.headers.origin)) return reject(res, 403, "forbidden Origin header");
    if (!tokenOk(req.headers.authorization)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="latch"');
      return reject(res, 401, "missing or wrong bearer token");
    }
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== "/mcp") return reject(res, 404, "not found: the MCP endpoint is /mcp");
    const sid = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(sid) ? sid[0] : sid;
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) return reject(res, 404, "unknown session: start a new one with initialize");
      const body = req.method === "POST" ? await readJson(req) : undefined;
      if (body instanceof Error) return reject(res, 400, body.message);
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST") return reject(res, 400, "no Mcp-Session-Id: start a session with an initialize POST");
    const body = await readJson(req);
    if (body instanceof Error) return reject(res, 400, body.message);
    if (!isInitializeRequest(body)) return reject(res, 400, "no Mcp-Session-Id: the first request must be initialize");
    // The id is made here, not by the transport, so the ledger session can follow it from the start.
    const id = randomUUID();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.set(id, transport);
      },
      onsessionclosed: () => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => sessions.delete(id);
    await createMcpSession({ host: opts.host, session: `mcp-http-${id}`, approveAll: opts.approveAll }).connect(
      transport,
    );
    return transport.handleRequest(req, res, body);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      log("error", `HTTP request failed: ${err.stack ?? err.message}`);
      if (!res.headersSent) reject(res, 500, "internal error");
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(opts.port, opts.bind, () => resolve());
  });
  const addr = http.address();
  port = typeof addr === "object" && addr ? addr.port : opts.port;
  const shownHost = opts.bind.includes(":") ? `[${opts.bind}]` : opts.bind;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    port,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
    },
  };
}

function reject(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return new Error(`request body over ${MAX_BODY} bytes`);
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return new Error("the request body is not valid JSON");
  }
}
