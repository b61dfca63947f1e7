// The checks every local HTTP listener of latch makes before it reads a request (the MCP endpoint,
// the approval console): the Host header must name this listener (a DNS-rebound name does not), an
// Origin, when a browser sends one, must be this listener's own, and the bearer token must match,
// compared in constant time.
import type { Server } from "node:http";
import { timingSafeEqual } from "node:crypto";

export interface LocalGuard {
  hostOk: (host: string | undefined) => boolean;
  originOk: (origin: string | undefined) => boolean;
  tokenOk: (authorization: string | undefined) => boolean;
}

export function isLoopback(addr: string): boolean {
  return addr === "localhost" || addr === "::1" || addr === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(addr);
}

/** `port()` is read at each check: a listener on port 0 learns its port after it binds. */
export function localGuard(opts: {
  bind: string;
  port: () => number;
  token: string;
  allowedHosts?: string[];
}): LocalGuard {
  const hostOk = (h: string | undefined) => {
    if (!h) return false;
    const port = opts.port();
    const names = new Set([
      "127.0.0.1",
      "localhost",
      "[::1]",
      opts.bind.includes(":") ? `[${opts.bind}]` : opts.bind,
      ...(opts.allowedHosts ?? []),
    ]);
    return [...names].some((n) => h === `${n}:${port}` || h === n);
  };
  const expected = Buffer.from(`Bearer ${opts.token}`);
  return {
    hostOk,
    originOk(o) {
      if (o === undefined) return true; // not a browser: no Origin to check
      try {
        const u = new URL(o);
        return (u.protocol === "http:" || u.protocol === "https:") && hostOk(u.host);
      } catch {
        return false;
      }
    },
    tokenOk(auth) {
      const got = Buffer.from(auth ?? "");
      return got.length === expected.length && timingSafeEqual(got, expected);
    },
  };
}

/** Listen on `bind:port` (0: any free port); the port taken and the host as a URL shows it. */
export async function listenLocal(
  http: Server,
  port: number,
  bind: string,
): Promise<{ port: number; shownHost: string }> {
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, bind, () => resolve());
  });
  const addr = http.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : port,
    shownHost: bind.includes(":") ? `[${bind}]` : bind,
  };
}
