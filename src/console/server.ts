// The approval console: a local web page with the calls that wait for a person (the state DB's
// approval queue, so every latch process on this state dir) and the policy-log viewer, updated live
// over server-sent events. `latch console` serves it alone; `latch mcp --http --console` on the MCP
// listener. The security is the anchors' (docs/security.md, "approval console"): loopback, Host and
// Origin checked, a bearer token in the Authorization header (the page gets it from the URL fragment,
// so no cookie and no CSRF class), a strict CSP, and an approval bound to the sha256 of the text the
// page rendered.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { z } from "zod";
import { sha256Hex, shownText } from "../approval/queue.js";
import type { StateStore } from "../store/types.js";
import { listenLocal, localGuard } from "../net/local-http.js";
import { logView, runLogs } from "./logs.js";
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from "./page.js";

export const CONSOLE_PATH = "/console";

export interface ConsoleOptions {
  /** The state store whose approval queue is shown: the state dir's SQLite, or a fleet's PostgreSQL. */
  store: StateStore;
  /** The state database (latch.db) whose log heads the viewer compares. */
  db: string;
  /** The folder whose run logs the viewer offers (the state dir's logs/, or a --policy-log folder). */
  logDir: string;
  token: string;
  bind: string;
  port: () => number;
  allowedHosts?: string[];
}

export interface ConsoleHandler {
  /** Handle a request whose path is under /console. */
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  close: () => void;
}

/** Who answered, as the waiting call reports it to the model and the policy log. */
export const CONSOLE_BY = "the person, in the latch console";
const MAX_NOTE = 500;

const Answer = z.strictObject({
  decision: z.enum(["once", "session", "deny"]),
  note: z.string().max(MAX_NOTE).optional(),
  shown_sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const HEADERS = {
  // No inline script or style, no framing, no form posts anywhere: the page runs only /console/app.js.
  "content-security-policy":
    "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export function consoleHandler(opts: ConsoleOptions): ConsoleHandler {
  const queue = opts.store.approvals;
  const guard = localGuard(opts);
  const streams = new Set<ServerResponse>();
  let lastApprovals = "";
  let lastLogs = "";
  let ticks = 0;

  // Every instance's waiting requests, labelled by host, workspace and session.
  const approvals = async () =>
    (await queue.list()).filter((q) => q.state === "pending").map((q) => ({ ...q, shown: shownText(q) }));
  const send = (event: string, data: string) => {
    for (const res of streams) res.write(`event: ${event}\ndata: ${data}\n\n`);
  };
  /** Push the queue when it changed; `force` for a stream that just opened. A store away keeps the last list. */
  const pushApprovals = async (force?: ServerResponse) => {
    let json;
    try {
      json = JSON.stringify(await approvals());
    } catch {
      return;
    }
    if (force) return void force.write(`event: approvals\ndata: ${json}\n\n`);
    if (json !== lastApprovals) send("approvals", json);
    lastApprovals = json;
  };
  const logsJson = () =>
    JSON.stringify(runLogs(opts.logDir).map((l) => ({ ...l, file: l.file.slice(l.file.lastIndexOf("/") + 1) })));
  // The store wakes the console on a change (another process's commit; a NOTIFY on PostgreSQL, and
  // every reconnect); expiry and new log lines are looked at once a second.
  let pushing = false;
  let pushAgain = false;
  const wake = () => {
    if (streams.size === 0) return;
    if (pushing) return void (pushAgain = true);
    pushing = true;
    void pushApprovals().finally(() => {
      pushing = false;
      if (pushAgain) {
        pushAgain = false;
        wake();
      }
    });
  };
  const unwatch = queue.watch(wake);
  const poll = setInterval(() => {
    if (streams.size === 0) return;
    wake();
    const logs = logsJson();
    if (logs !== lastLogs) send("logs", logs);
    lastLogs = logs;
    if (++ticks % 15 === 0) for (const res of streams) res.write(": keep-alive\n\n");
  }, 1000);
  poll.unref();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!guard.hostOk(req.headers.host)) return fail(res, 403, "forbidden Host header (DNS rebinding protection)");
    if (!guard.originOk(req.headers.origin)) return fail(res, 403, "forbidden Origin: only this console's own page");
    const url = new URL(req.url ?? "/", "http://x");
    const route = url.pathname.slice(CONSOLE_PATH.length) || "/";
    if (req.method === "GET" && route === "/") return staticFile(res, "text/html", PAGE_HTML);
    if (req.method === "GET" && route === "/app.js") return staticFile(res, "text/javascript", PAGE_JS);
    if (req.method === "GET" && route === "/app.css") return staticFile(res, "text/css", PAGE_CSS);
    if (!route.startsWith("/api/")) return fail(res, 404, `not found: the console is ${CONSOLE_PATH}/`);
    if (!guard.tokenOk(req.headers.authorization)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="latch console"');
      return fail(res, 401, "missing or wrong bearer token: open the link `latch console` printed");
    }
    if (req.method === "GET" && route === "/api/approvals") return json(res, 200, await approvals());
    if (req.method === "GET" && route === "/api/events") {
      res.writeHead(200, { ...HEADERS, "content-type": "text/event-stream" });
      streams.add(res);
      res.on("close", () => streams.delete(res));
      await pushApprovals(res);
      res.write(`event: logs\ndata: ${logsJson()}\n\n`);
      return;
    }
    if (req.method === "GET" && route === "/api/logs") return json(res, 200, JSON.parse(logsJson()));
    const logName = /^\/api\/logs\/([^/]+)$/.exec(route)?.[1];
    if (req.method === "GET" && logName) {
      // Only a log the list offers, by its bare name: no path from the request reaches the disk.
      const entry = runLogs(opts.logDir).find((l) => l.file.endsWith(`/${decodeURIComponent(logName)}`));
      if (!entry) return fail(res, 404, "no such run log in this console's log folder");
      return json(res, 200, logView(entry.file, opts.db));
    }
    const id = /^\/api\/approvals\/([0-9a-f]{8})$/.exec(route)?.[1];
    if (req.method === "POST" && id) return answer(req, res, id);
    return fail(res, 404, "not found");
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, id: string) => {
    if (!/^application\/json\b/.test(req.headers["content-type"] ?? ""))
      return fail(res, 415, "send the answer as application/json");
    const body = await readBody(req);
    let parsed;
    try {
      parsed = Answer.parse(JSON.parse(body));
    } catch {
      return fail(
        res,
        400,
        `expected {"decision": "once" | "session" | "deny", "note"?: text up to ${MAX_NOTE} characters, "shown_sha256": the sha256 of the text shown}`,
      );
    }
    const item = await queue.get(id);
    if (!item || item.state !== "pending")
      return fail(res, 409, `approval ${id} is not waiting: it was answered, timed out, or its call ended`);
    // What you see is what you sign: the hash of the text the page rendered, against this request's.
    if (parsed.shown_sha256 !== sha256Hex(shownText(item)))
      return fail(res, 409, `what the page showed is not what approval ${id} asks; reload and read it again`);
    if (parsed.decision === "session" && !item.scope)
      return fail(res, 400, `approval ${id} can be approved once only (${item.risk.join(", ")})`);
    // One conditional update on (id, pending, the shown sha256): of two answers, one wins.
    const ok = await queue.answer(id, {
      approved: parsed.decision !== "deny",
      scope: parsed.decision === "session" ? "session" : "once",
      by: CONSOLE_BY,
      shownSha256: parsed.shown_sha256,
      ...(parsed.note ? { note: parsed.note } : {}),
    });
    if (!ok) return fail(res, 409, `approval ${id} was answered elsewhere first`);
    wake();
    return json(res, 200, { id, decision: parsed.decision });
  };

  return {
    handle,
    close() {
      clearInterval(poll);
      unwatch();
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}

export interface ConsoleServer {
  /** The page's address, without the token. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `latch console`: the console alone on its own listener. */
export async function serveConsole(opts: Omit<ConsoleOptions, "port"> & { port: number }): Promise<ConsoleServer> {
  let port = opts.port;
  const app = consoleHandler({ ...opts, port: () => port });
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const run =
      path === "/" || path === CONSOLE_PATH
        ? Promise.resolve(void res.writeHead(308, { location: `${CONSOLE_PATH}/` }).end())
        : path.startsWith(`${CONSOLE_PATH}/`)
          ? app.handle(req, res)
          : Promise.resolve(fail(res, 404, `not found: the console is ${CONSOLE_PATH}/`));
    run.catch(() => {
      if (!res.headersSent) fail(res, 500, "internal error");
    });
  });
  const listening = await listenLocal(http, opts.port, opts.bind);
  port = listening.port;
  const shownHost = listening.shownHost;
  return {
    url: `http://${shownHost}:${port}${CONSOLE_PATH}/`,
    port,
    async close() {
      app.close();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}

function staticFile(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, { ...HEADERS, "content-type": `${type}; charset=utf-8` });
  res.end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...HEADERS, "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function fail(res: ServerResponse, status: number, error: string): void {
  json(res, status, { error });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 64 << 10) break; // an answer is a few hundred bytes
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
