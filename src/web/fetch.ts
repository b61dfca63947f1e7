// The protected transport under url_fetch. latch resolves the name itself, refuses any non-public
// address, and connects to the very address it checked (a pinned `lookup`: no second resolution for a
// rebinding name to change). No cookies, no credentials, no proxy, no connection reuse. Every
// redirect is checked again (at most 5); one to another host is handed back to the model, so the
// envelope's domain rules see every host. Size (after decompression) and time are capped.
import type http from "node:http";
import type https from "node:https";
import { createRequire } from "node:module";
import net from "node:net";
import { addAbortSignal, type Readable } from "node:stream";
import zlib from "node:zlib";
import { Refusal, ToolError } from "../errors.js";
import { blockedReason, canonicalIp, isIpLiteral } from "../net/address.js";
import type { WebSettings } from "../config/web.js";

/** Name → addresses. The system resolver by default; tests inject their own. */
export type Resolver = (host: string) => Promise<string[]>;

// http, https (with tls) and dns are loaded at the first fetch: every `latch` start imports this file
// (url_fetch's module), and loading them costs ~3 ms that a start without a fetch does not need.
const load = createRequire(import.meta.url);
const dns = () => load("node:dns/promises") as typeof import("node:dns/promises");
const transport = (protocol: string) =>
  (protocol === "https:" ? load("node:https") : load("node:http")) as typeof import("node:https");

const systemResolver: Resolver = async (host) =>
  (await dns().lookup(host, { all: true, verbatim: true })).map((a) => a.address);

const MAX_REDIRECTS = 5;
const MAX_URL_CHARS = 8192;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HINT = "url_fetch opens public http and https pages only.";

/** The URL as url_fetch will use it, or a refusal: http(s) only, no credentials, no private IP literal. */
export function checkUrl(input: string, settings: WebSettings): URL {
  if (input.length > MAX_URL_CHARS) throw new Refusal(`The URL is over ${MAX_URL_CHARS} characters.`, HINT);
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new Refusal(
      `\`${input}\` is not a valid absolute URL.`,
      `${HINT} Give a full URL such as https://example.com/page.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Refusal(`The scheme \`${url.protocol}\` is not fetched.`, HINT);
  if (url.username !== "" || url.password !== "")
    throw new Refusal(
      "The URL carries a user name or password; url_fetch sends no credentials.",
      "Remove the `user:password@` part of the URL.",
    );
  url.hash = "";
  if (isIpLiteral(url.hostname)) checkAddress(url.hostname, url.hostname, settings);
  return url;
}

/** Refuse a non-public address unless the operator's test allowance names it exactly. */
function checkAddress(host: string, address: string, settings: WebSettings): void {
  const why = blockedReason(address);
  if (why === undefined || settings.testAllowAddresses.includes(canonicalIp(address))) return;
  const what = host === address ? `\`${host}\`` : `\`${host}\` resolves to ${address}, which`;
  throw new Refusal(`${what} is a ${why} address; url_fetch connects to public addresses only.`, HINT);
}

/** The one address to connect to: the literal, or the name's first address once all of them passed. */
async function pickAddress(url: URL, settings: WebSettings, resolve: Resolver): Promise<string> {
  const host = url.hostname;
  if (isIpLiteral(host)) {
    checkAddress(host, host, settings);
    return canonicalIp(host);
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new ToolError("ENOTFOUND", `The name \`${host}\` could not be resolved (${(err as Error).message}).`);
  }
  if (addresses.length === 0) throw new ToolError("ENOTFOUND", `The name \`${host}\` has no address.`);
  for (const a of addresses) {
    if (!isIpLiteral(a))
      throw new ToolError("ENOTFOUND", `The resolver gave \`${a}\` for \`${host}\`, not an address.`);
    checkAddress(host, a, settings); // one private answer among public ones refuses the name (rebinding setups)
  }
  return canonicalIp(addresses[0]);
}

export interface Fetched {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was cut at maxFetchBytes (after decompression). */
  cut: boolean;
  address: string;
  redirects: string[];
  /** A redirect to another host, not followed: the model may fetch it (and the envelope decide it). */
  crossHostRedirect?: string;
}

export async function protectedFetch(
  start: URL,
  settings: WebSettings,
  signal: AbortSignal,
  resolve: Resolver = systemResolver,
): Promise<Fetched> {
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const both = AbortSignal.any([signal, deadline]);
  const redirects: string[] = [];
  let url = start;
  try {
    for (;;) {
      const address = await pickAddress(url, settings, resolve);
      both.throwIfAborted();
      const res = await request(url, address, both);
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode ?? 0) && location) {
        res.destroy();
        const next = checkUrl(new URL(location, url).href, settings);
        if (next.hostname !== url.hostname)
          return { ...empty(start, url, res, address, redirects), crossHostRedirect: next.href };
        if (redirects.length >= MAX_REDIRECTS)
          throw new ToolError("EREDIRECTS", `More than ${MAX_REDIRECTS} redirects, the last to ${next.href}.`);
        redirects.push(next.href);
        url = next;
        continue;
      }
      const { body, cut } = await readBody(res, settings.maxFetchBytes, both);
      return { ...empty(start, url, res, address, redirects), body, cut };
    }
  } catch (err) {
    if (signal.aborted) throw new ToolError("ECANCELED", "The fetch was cancelled.");
    if (deadline.aborted)
      throw new ToolError(
        "ETIMEDOUT",
        `The fetch took longer than ${settings.timeoutMs} ms (_fetch_timeout) and was stopped.`,
      );
    if (err instanceof Refusal || err instanceof ToolError) throw err;
    throw new ToolError("EFETCH", `Fetching ${url.href} failed: ${(err as Error).message}.`);
  }
}

function empty(start: URL, url: URL, res: http.IncomingMessage, address: string, redirects: string[]): Fetched {
  return {
    url: start.href,
    finalUrl: url.href,
    status: res.statusCode ?? 0,
    contentType: String(res.headers["content-type"] ?? ""),
    body: Buffer.alloc(0),
    cut: false,
    address,
    redirects,
  };
}

/** A `lookup` that answers every name with the address latch checked: no second resolution to rebind. */
export function pinnedLookup(address: string): net.LookupFunction {
  const family = net.isIP(address);
  // Called for names only (node connects to a literal directly).
  return ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as net.LookupFunction;
}

function request(url: URL, address: string, signal: AbortSignal): Promise<http.IncomingMessage> {
  const lookup = pinnedLookup(address);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const options: https.RequestOptions = {
    method: "GET",
    protocol: url.protocol,
    hostname: host,
    port: url.port || undefined,
    path: url.pathname + url.search,
    headers: {
      "user-agent": "latch-url-fetch/0.1",
      accept: "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5",
      "accept-encoding": "gzip, deflate, br",
    },
    agent: false, // a fresh connection: no pooled socket to another address, no proxy agent
    lookup,
    signal,
    ...(isIpLiteral(url.hostname) ? {} : { servername: host }),
  };
  return new Promise((resolveRes, reject) => {
    const req = transport(url.protocol).request(options, resolveRes);
    req.once("error", reject);
    req.end();
  });
}

/**
 * The body, decompressed, stopped at `max` bytes (a compression bomb stops there too). Read with a
 * loop the cap can break out of, not stream.pipeline with a sink that returns early: on Node 22 and
 * 24 such a pipeline never settles once its sink stops reading, so a bomb hung the call.
 */
async function readBody(
  res: http.IncomingMessage,
  max: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; cut: boolean }> {
  const enc = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    enc === "gzip" || enc === "x-gzip"
      ? zlib.createGunzip()
      : enc === "deflate"
        ? zlib.createInflate()
        : enc === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  const source: Readable = decoder ?? res;
  if (decoder) {
    res.once("error", (err) => decoder.destroy(err));
    res.pipe(decoder);
  }
  addAbortSignal(signal, source);
  const chunks: Buffer[] = [];
  let total = 0;
  let cut = false;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      if (total >= max) {
        cut = true; // more bytes after the cap
        break;
      }
      const take = Math.min(chunk.length, max - total);
      chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
      total += take;
      if (take < chunk.length) {
        cut = true;
        break;
      }
    }
  } finally {
    res.destroy();
    decoder?.destroy();
    // The call returns once its connection is closed, as it did when a pipeline waited for it.
    const socket = res.socket;
    if (socket && !socket.closed) await new Promise((done) => socket.once("close", done));
  }
  return { body: Buffer.concat(chunks, total), cut };
}
