// A real HTTP server on 127.0.0.1 for the web tests: routes are functions, every request is recorded
// (path, headers), and every socket's close is seen, so a test can check what latch sent and that a
// connection it stopped was really closed, or that none was opened.
import http from "node:http";
import type { AddressInfo } from "node:net";

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface TestServer {
  port: number;
  base: string;
  requests: Seen[];
  /** Sockets accepted so far. */
  opened(): number;
  /** Sockets closed so far. */
  closed(): number;
  close(): Promise<void>;
}

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export async function startServer(routes: Record<string, Route>): Promise<TestServer> {
  const requests: Seen[] = [];
  let opened = 0;
  let closed = 0;
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers });
    const route = routes[(req.url ?? "").split("?")[0]];
    if (route) route(req, res);
    else {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  server.on("connection", (s) => {
    opened++;
    s.on("close", () => closed++);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    requests,
    opened: () => opened,
    closed: () => closed,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
