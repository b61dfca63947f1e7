// [tools_policies.web]: the limits of url_fetch and web_search. Operator configuration only; nothing
// here can come from model input. The schema is one of the toolsets' (src/config/settings.ts).
import { z } from "zod";
import { commaList, num, positiveInt, table } from "./toolsets.js";
import { expected } from "../errors.js";
import { blockedReason, canonicalIp } from "../net/address.js";

export interface WebSettings {
  /** Decompressed bytes one fetch may download; past it the body is cut and marked. */
  maxFetchBytes: number;
  /** The whole fetch (every redirect, connect, headers, body), in ms. */
  timeoutMs: number;
  /** What one page of a result may send to the model, in bytes. */
  maxOutputBytes: number;
  /** The process-wide page cache: total bytes, and how long an entry stays fresh (ms). */
  cacheBytes: number;
  cacheTtlMs: number;
  /**
   * Non-public addresses url_fetch may connect to anyway: for tests and local development against a
   * server on this machine. Exact addresses (canonical form), never ranges; empty by default.
   */
  testAllowAddresses: string[];
  /** The search provider's base URL (tests point it at a loopback fake). */
  searchBaseUrl?: string;
}

const notAnIp = (a: string) => blockedReason(a) === "not an IP address";

function isBaseUrl(raw: string): boolean {
  const base = raw.trim();
  if (base === "") return true;
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    return false; // reported by the schema, with the key
  }
  return (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password;
}

export const web = table({
  _max_fetch_bytes: positiveInt("_max_fetch_bytes"),
  _fetch_timeout: positiveInt("_fetch_timeout"),
  _max_output_bytes: positiveInt("_max_output_bytes"),
  _cache_bytes: positiveInt("_cache_bytes"),
  _cache_ttl: positiveInt("_cache_ttl"),
  _test_allow_addresses: z
    .string()
    .refine((v) => !commaList(v).some(notAnIp), {
      error: (iss) =>
        expected(
          "_test_allow_addresses",
          "a comma-separated list of IP addresses such as 127.0.0.1",
          commaList(String(iss.input)).find(notAnIp),
        ),
    })
    .optional(),
  _search_base_url: z
    .string()
    .refine(isBaseUrl, {
      error: (iss) =>
        expected(
          "_search_base_url",
          "an http(s) URL without credentials, such as https://api.exa.ai",
          String(iss.input).trim(),
        ),
    })
    .optional(),
}).transform((r): WebSettings => {
  const base = r._search_base_url?.trim();
  return {
    maxFetchBytes: num(r._max_fetch_bytes, 5 * 1024 * 1024),
    timeoutMs: num(r._fetch_timeout, 30_000),
    maxOutputBytes: num(r._max_output_bytes, 32 * 1024),
    cacheBytes: num(r._cache_bytes, 32 * 1024 * 1024),
    cacheTtlMs: num(r._cache_ttl, 15 * 60_000),
    testAllowAddresses: commaList(r._test_allow_addresses).map(canonicalIp),
    ...(base ? { searchBaseUrl: base.replace(/\/+$/, "") } : {}),
  };
});
