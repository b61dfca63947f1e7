// A `fetch` for the gateway's HTTP upstreams (src/gateway/: MCP servers by `url`, OpenAPI services),
// with the rules of url_fetch's transport (fetch.ts): latch resolves the name itself, refuses every
// non-public address unless the operator named that host (`private_hosts`), and connects to the very
// address it checked. No cookies, no proxy, no pooled connection; redirects are never followed here
// (each request the caller makes after one comes back through this check); a body past `maxBodyBytes`
// is an error, not a buffer that grows.
import http from "node:http";
import https from "node:https";
import { Readable, Transform } from "node:stream";
import zlib from "node:zlib";
import dns from "node:dns/promises";
import { blockedReason, canonicalIp, isIpLiteral } from "../net/address.js";
import { pinnedLookup } from "./fetch.js";

/** What the MCP SDK's transports take (`FetchLike`) and the OpenAPI caller uses. */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface GuardOptions {
  /** Where the refusal points the operator (`[mcp_servers.web]`). */
  table: string;
  /** Hosts, as written in URLs, that may be (or resolve to) a private address: the operator named them. */
  privateHosts: readonly string[];
  /** The longest body read from one response (after decompression); past it the read fails. */
  maxBodyBytes: number;
  /** Name → addresses; the system resolver by default (tests inject their own). */
  resolve?: (host: string) => Promise<string[]>;
}

/** A request the guard refuses: a private address not named, a scheme or URL it does not send. */
export class GuardRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuardRefusal";
  }
}

const systemResolver = async (host: string) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Host names compare lowercase; IP literals in their canonical form. */
function hostKey(host: string): string {
  return isIpLiteral(host) ? canonicalIp(host) : host.toLowerCase();
}

export function guardedFetch(o: GuardOptions): GuardedFetch {
  const named = new Set(o.privateHosts.map(hostKey));
  const resolve = o.resolve ?? systemResolver;
  /** The one address to connect to; every address the name has must pass, or the host be named. */
  const addressOf = async (url: URL): Promise<string> => {
    const host = url.hostname;
    const allowed = named.has(hostKey(host));
    const addresses = isIpLiteral(host) ? [canonicalIp(host)] : await resolve(host);
    if (addresses.length === 0) throw new Error(`the name \`${host}\` has no address`);
    for (const a of addresses) {
      const why = blockedReason(a);
      if (why !== undefined && !allowed)
        throw new GuardRefusal(
          `\`${host}\`${host === a ? "" : ` resolves to ${a}, which`} is a ${why} address; latch reaches private addresses only for hosts the config names: add "${host}" to \`private_hosts\` in ${o.table}`,
        );
    }
    return addresses[0];
  };
  return async (input, init = {}) => {
    const url = new URL(typeof input === "string" ? input : input.href);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new GuardRefusal(`the scheme \`${url.protocol}\` is not reached (${o.table}: http and https only)`);
    if (url.username !== "" || url.password !== "")
      throw new GuardRefusal(
        `a URL with a user name or password is not sent (${o.table}): use \`headers\` or \`auth\``,
      );
    init.signal?.throwIfAborted();
    const address = await addressOf(url);
    const res = await request(url, address, init);
    return toResponse(res, o.maxBodyBytes, init.method ?? "GET");
  };
}

function bodyOf(body: RequestInit["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new Error("latch bug: the gateway sends only strings and bytes");
}

function request(url: URL, address: string, init: RequestInit): Promise<http.IncomingMessage> {
  const lookup = pinnedLookup(address);
  const headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br" };
  new Headers(init.headers).forEach((v, k) => (headers[k] = v));
  const body = bodyOf(init.body);
  if (body) headers["content-length"] = String(body.length);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const options: https.RequestOptions = {
    method: init.method ?? "GET",
    protocol: url.protocol,
    hostname: host,
    port: url.port || undefined,
    path: url.pathname + url.search,
    headers,
    agent: false, // a fresh connection: no pooled socket to another address, no proxy agent
    lookup,
    ...(init.signal ? { signal: init.signal } : {}),
    ...(isIpLiteral(url.hostname) ? {} : { servername: host }),
  };
  return new Promise((done, fail) => {
    const req = (url.protocol === "https:" ? https : http).request(options, done);
    req.once("error", fail);
    req.end(body);
  });
}

/** Counts the bytes that pass and fails the stream past `max`: a flood is refused, not buffered. */
function capped(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, next) {
      seen += chunk.length;
      if (seen > max) next(new Error(`the answer was over ${max} bytes; latch stopped reading it`));
      else next(null, chunk);
    },
  });
}

function decoderOf(enc: string): Transform | undefined {
  if (enc === "gzip" || enc === "x-gzip") return zlib.createGunzip();
  if (enc === "deflate") return zlib.createInflate();
  if (enc === "br") return zlib.createBrotliDecompress();
  return undefined;
}

function toResponse(res: http.IncomingMessage, max: number, method: string): Response {
  const status = res.statusCode ?? 502;
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined || k === "set-cookie") continue; // no cookies are kept or shown
    headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  if (status === 204 || status === 304 || method === "HEAD") {
    res.resume();
    return new Response(null, { status, headers });
  }
  const enc = (headers.get("content-encoding") ?? "").trim().toLowerCase();
  const decoder = decoderOf(enc);
  if (decoder) {
    headers.delete("content-encoding");
    headers.delete("content-length");
  }
  const cap = capped(max);
  const fail = (err: Error) => cap.destroy(err);
  res.once("error", fail);
  if (decoder) {
    decoder.once("error", fail);
    res.pipe(decoder).pipe(cap);
  } else res.pipe(cap);
  cap.once("close", () => res.destroy());
  const body = Readable.toWeb(cap) as ReadableStream<Uint8Array>;
  return new Response(body, { status: status < 200 || status > 599 ? 502 : status, headers });
}
