// The filtering proxy for one contained call granted network (the sandbox-runtime design): the box
// keeps no network of its own; its programs reach this HTTP proxy (CONNECT for TLS and anything else,
// absolute-URI requests for plain HTTP) through the in-box bridge (bridge.ts), which hands each
// accepted connection over to latch. The proxy connects only to the granted names, and only to public
// addresses: url_fetch's rules (net/address.ts), the name resolved once and the checked address used.
// A test maps a name to a loopback server explicitly (`_network_test_hosts`), never by a blanket allow.
import dns from "node:dns/promises";
import http from "node:http";
import net from "node:net";
import { blockedReason, canonicalIp, isIpLiteral } from "../../net/address.js";
import { domainMatches } from "./grant.js";

/** What a person or the operator granted for one call. */
export interface NetworkGrant {
  /** Names (`registry.npmjs.org`, `*.pythonhosted.org`) or "any" for every public name ("network"). */
  domains: readonly string[] | "any";
  /** Names mapped to an address (and port) for tests: these skip the resolver and the address rules. */
  testHosts?: ReadonlyMap<string, { address: string; port?: number }>;
}

/** What the call's programs reached and what the proxy refused, for the result and the policy log. */
export interface NetworkReport {
  granted: string[] | "any";
  reached: string[];
  refused: { host: string; why: string }[];
}

type Resolver = (host: string) => Promise<string[]>;
const systemResolver: Resolver = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Hop-by-hop headers a proxy never forwards (RFC 9110 7.6.1), and the proxy's own credentials. */
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

export class CallProxy {
  private readonly server = http.createServer();
  private readonly reached = new Set<string>();
  private readonly refused = new Map<string, string>();

  constructor(
    readonly grant: NetworkGrant,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.server.on(
      "connect",
      (req: http.IncomingMessage, client: net.Socket, head: Buffer) => void this.tunnel(req, client, head),
    );
    this.server.on("request", (req, res) => void this.forward(req, res));
    this.server.on("clientError", (_err, socket) => socket.destroy());
  }

  /** A connection of the box's programs to the bridge, handed over by it (exec.ts). */
  accept(socket: net.Socket): void {
    this.track(socket);
    this.server.emit("connection", socket);
  }

  report(): NetworkReport {
    return {
      granted: this.grant.domains === "any" ? "any" : [...this.grant.domains],
      reached: [...this.reached].sort(),
      refused: [...this.refused].map(([host, why]) => ({ host, why })).sort((a, b) => a.host.localeCompare(b.host)),
    };
  }

  /** When the box ends, its side of every connection closes, and the pair goes with it (tunnel). */
  private track(s: net.Socket): void {
    s.on("error", () => undefined);
  }

  /**
   * Where `host:port` may be reached: the checked address, or why not. A name outside the grant, an
   * IP literal the grant does not name, a name with any non-public address: refused.
   */
  private async target(host: string, port: number): Promise<{ address: string; port: number } | { why: string }> {
    const name = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
    const key = name.toLowerCase();
    const { domains, testHosts } = this.grant;
    if (!(domains === "any" || domains.some((d) => domainMatches(d, key)))) return { why: "not granted for this call" };
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { why: `port ${port} is not a port` };
    const mapped = testHosts?.get(key);
    if (mapped) return { address: mapped.address, port: mapped.port ?? port };
    let addresses: string[];
    if (isIpLiteral(name)) addresses = [canonicalIp(name)];
    else {
      try {
        addresses = await this.resolve(name);
      } catch (err) {
        return { why: `the name could not be resolved (${(err as Error).message})` };
      }
    }
    if (addresses.length === 0) return { why: "the name has no address" };
    for (const a of addresses) {
      const why = blockedReason(a);
      // One private answer among public ones refuses the name, as url_fetch does (rebinding setups).
      if (why !== undefined) return { why: `${a} is a ${why} address` };
    }
    return { address: addresses[0], port };
  }

  private note(host: string, t: { why: string } | object): t is { why: string } {
    if ("why" in t) {
      this.refused.set(host.toLowerCase(), t.why);
      return true;
    }
    this.reached.add(host.toLowerCase());
    return false;
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? "");
    if (!m) return void client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    const t = await this.target(m[1], Number(m[2]));
    if (this.note(m[1], t)) return void client.end(refusal(m[1], t.why));
    const upstream = net.connect(t.port, t.address);
    this.track(upstream);
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    client.once("close", () => upstream.destroy());
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      return void res.writeHead(400).end("latch proxy: requests must use an absolute http:// URL\n");
    }
    if (url.protocol !== "http:") return void res.writeHead(400).end("latch proxy: only http:// is forwarded\n");
    const t = await this.target(url.hostname, Number(url.port || 80));
    if (this.note(url.hostname, t)) {
      res.writeHead(403, { "content-type": "text/plain", "x-latch-refused": "1" });
      return void res.end(`latch: network to ${url.hostname} refused: ${t.why}\n`);
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    const up = http.request(
      { host: t.address, port: t.port, method: req.method, path: url.pathname + url.search, headers, agent: false },
      (r) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(r.headers)) if (!HOP.has(k)) back[k] = v;
        res.writeHead(r.statusCode ?? 502, back);
        r.pipe(res);
      },
    );
    up.once("error", () =>
      res.headersSent ? res.destroy() : res.writeHead(502).end("latch proxy: upstream failed\n"),
    );
    req.pipe(up);
  }
}

function refusal(host: string, why: string): string {
  const body = `latch: network to ${host} refused: ${why}\n`;
  return `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-latch-refused: 1\r\n\r\n${body}`;
}
