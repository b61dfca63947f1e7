// latch mcp --http: streamable HTTP with sessions. Every request must carry the bearer token; Host and
// Origin are checked against DNS rebinding; each MCP session is its own ledger session. Checks run
// before the MCP transport sees the request, so a rejected request runs nothing.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { BoundedEventStore } from "./event-store.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { listenLocal, localGuard } from "../../net/local-http.js";
import { log } from "../log.js";
import { argumentLimits, overLimit, type ArgumentLimits } from "./call-size.js";
import { nestsDeeper, TOO_DEEP } from "./depth.js";
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
  /** A session with no request for this long (and none running) is closed; default 30 min. */
  idleMs?: number;
  /** At most this many sessions at once; an initialize past it is refused; default 256. */
  maxSessions?: number;
  /** Another page on this listener (`--console`): requests under `prefix` go to it after the Host and Origin checks; it checks the token itself. */
  console?: { prefix: string; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> };
  /** A request body not complete within this long is answered 408 and its session freed; default 30 s. */
  bodyTimeoutMs?: number;
}

const DEFAULT_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_SESSIONS = 256;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

interface Live {
  transport: StreamableHTTPServerTransport;
  server: { close(): Promise<void> };
  lastSeen: number;
  /** Requests of this session being handled now (a running call, an open GET stream). */
  busy: number;
}

export interface HttpHandle {
  url: string;
  port: number;
  /** How many sessions are open now. */
  sessions(): number;
  close(): Promise<void>;
}

const MAX_BODY = 16 << 20;

export { isLoopback } from "../../net/local-http.js";

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export async function serveHttp(opts: HttpOptions): Promise<HttpHandle> {
  // Clients do not always send DELETE: a session that stays idle is closed, so the map stays bounded.
  const sessions = new Map<string, Live>();
  const idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
  const maxSessions = opts.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const bodyMs = opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const limits = argumentLimits(() => opts.host.tools());
  const end = (id: string, why: string) => {
    const live = sessions.get(id);
    if (!live) return;
    sessions.delete(id);
    log("info", `HTTP session ${id} closed: ${why}`);
    void live.transport.close().catch(() => undefined);
    void live.server.close().catch(() => undefined);
    // The session's background processes end with it.
    void opts.host.endSession(`mcp-http-${id}`).catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) if (s.busy === 0 && now - s.lastSeen >= idleMs) end(id, "idle");
    },
    Math.max(250, Math.min(idleMs / 4, 60_000)),
  );
  sweep.unref();
  let port = opts.port;
  const { hostOk, originOk, tokenOk } = localGuard({
    bind: opts.bind,
    port: () => port,
    token: opts.token,
    allowedHosts: opts.allowedHosts,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!hostOk(req.headers.host)) return reject(res, 403, "forbidden Host header (DNS rebinding protection)");
    if (!originOk(req.headers.origin)) return reject(res, 403, "forbidden Origin header");
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (opts.console && (path === opts.console.prefix || path.startsWith(`${opts.console.prefix}/`)))
      return opts.console.handle(req, res);
    if (!tokenOk(req.headers.authorization)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="latch"');
      return reject(res, 401, "missing or wrong bearer token");
    }
    if (path !== "/mcp") return reject(res, 404, "not found: the MCP endpoint is /mcp");
    const sid = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(sid) ? sid[0] : sid;
    if (sessionId !== undefined) {
      const live = sessions.get(sessionId);
      if (!live)
        return reject(res, 404, "unknown or expired session (idle ones are closed): start a new one with initialize");
      live.lastSeen = Date.now();
      live.busy++;
      try {
        const body = req.method === "POST" ? await readJson(req, bodyMs, limits) : undefined;
        if (body instanceof BodyError) return refuseBody(req, res, body);
        if (body instanceof OverLimit) return invalidParams(res, body.id, body.message);
        if (nestsDeeper(body)) return tooDeep(res, body);
        await live.transport.handleRequest(req, res, body);
        // handleRequest returns before an SSE answer is finished: the session is busy until the response is.
        if (!res.writableEnded) await new Promise((done) => res.once("close", done));
      } finally {
        live.busy--;
        live.lastSeen = Date.now();
      }
      if (req.method === "DELETE") end(sessionId, "the client sent DELETE");
      return;
    }
    if (req.method !== "POST") return reject(res, 400, "no Mcp-Session-Id: start a session with an initialize POST");
    const body = await readJson(req, bodyMs, limits);
    if (body instanceof BodyError) return refuseBody(req, res, body);
    if (body instanceof OverLimit) return invalidParams(res, body.id, body.message);
    if (nestsDeeper(body)) return tooDeep(res, body);
    if (!isInitializeRequest(body)) return reject(res, 400, "no Mcp-Session-Id: the first request must be initialize");
    if (sessions.size >= maxSessions)
      return reject(
        res,
        503,
        `too many open sessions (${maxSessions}, --max-sessions): close one with DELETE, or wait; sessions idle for ${Math.round(idleMs / 1000)} s are closed`,
      );
    // The id is made here, not by the transport, so the ledger session can follow it from the start.
    const id = randomUUID();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.set(id, { transport, server, lastSeen: Date.now(), busy: 0 });
      },
      onsessionclosed: () => end(id, "the client sent DELETE"),
      // A client that lost its connection during a call gets the answer on reconnecting (event-store.ts).
      eventStore: new BoundedEventStore(),
    });
    transport.onclose = () => end(id, "transport closed");
    const { server } = createMcpSession({ host: opts.host, session: `mcp-http-${id}`, approveAll: opts.approveAll });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      log("error", `HTTP request failed: ${err.stack ?? err.message}`);
      if (!res.headersSent) reject(res, 500, "internal error");
    });
  });
  const listening = await listenLocal(http, opts.port, opts.bind);
  port = listening.port;
  const shownHost = listening.shownHost;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    port,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweep);
      for (const s of sessions.values()) await s.transport.close().catch(() => undefined);
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}

function reject(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** A request nested past MAX_JSON_DEPTH: answered as invalid params, to its id when it has one. */
function tooDeep(res: ServerResponse, body: unknown): void {
  const raw =
    body !== null && typeof body === "object" && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  invalidParams(res, typeof raw === "string" || typeof raw === "number" ? raw : null, TOO_DEEP);
}

function invalidParams(res: ServerResponse, id: string | number | null, message: string): void {
  res.writeHead(id === null ? 400 : 200, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32602, message }, id }));
}

/** A call past its tool's argument limit, found from the body's bytes (call-size.ts): not parsed. */
class OverLimit {
  constructor(
    readonly id: string | number,
    readonly message: string,
  ) {}
}

class BodyError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** A body that cannot be read: answered; one that never finished is also cut off, so its connection ends. */
function refuseBody(req: IncomingMessage, res: ServerResponse, err: BodyError): void {
  if (err.status === 408) {
    res.setHeader("connection", "close");
    res.once("finish", () => req.destroy());
  }
  reject(res, err.status, err.message);
}

/**
 * The body as JSON, read within `ms`: a client that starts a body and never ends it would otherwise
 * keep its session busy (never idle, never swept) for as long as the connection stays open.
 */
async function readJson(req: IncomingMessage, ms: number, limits: ArgumentLimits): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  const read = (async () => {
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return new BodyError(`request body over ${MAX_BODY} bytes`);
      chunks.push(c as Buffer);
    }
    return undefined;
  })().catch(() => new BodyError("the request body was cut off"));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<BodyError>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          new BodyError(
            `the request body did not complete within ${Math.round(ms / 1000)} s (--body-timeout); send it whole`,
            408,
          ),
        ),
      ms,
    );
  });
  const fault = await Promise.race([read, late]).finally(() => clearTimeout(timer));
  if (fault) return fault;
  const body = Buffer.concat(chunks);
  const over = overLimit(body, limits);
  if (over) return new OverLimit(over.id, over.message);
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return new BodyError("the request body is not valid JSON");
  }
}
