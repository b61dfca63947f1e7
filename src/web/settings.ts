// [tools_policies.web]: the limits of url_fetch and web_search. Operator configuration only; nothing
// here can come from model input.
import { commaList, SettingError } from "../config/toolsets.js";
import { expected } from "../errors.js";
import { blockedReason, canonicalIp } from "./address.js";

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

function positive(key: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw)))
    throw new SettingError(key, expected(key, 'a positive whole number in a string, such as "1048576"', raw));
  return Number(raw);
}

export function webSettings(raw: Record<string, string> = {}): WebSettings {
  const allow = commaList(raw._test_allow_addresses).map((a) => {
    if (blockedReason(a) === "not an IP address")
      throw new SettingError(
        "_test_allow_addresses",
        expected("_test_allow_addresses", "a comma-separated list of IP addresses such as 127.0.0.1", a),
      );
    return canonicalIp(a);
  });
  const base = raw._search_base_url?.trim();
  if (base !== undefined && base !== "") {
    let u: URL | undefined;
    try {
      u = new URL(base);
    } catch {
      u = undefined; // reported just below, with the key
    }
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:") || u.username || u.password)
      throw new SettingError(
        "_search_base_url",
        expected("_search_base_url", "an http(s) URL without credentials, such as https://api.exa.ai", base),
      );
  }
  return {
    maxFetchBytes: positive("_max_fetch_bytes", raw._max_fetch_bytes, 5 * 1024 * 1024),
    timeoutMs: positive("_fetch_timeout", raw._fetch_timeout, 30_000),
    maxOutputBytes: positive("_max_output_bytes", raw._max_output_bytes, 32 * 1024),
    cacheBytes: positive("_cache_bytes", raw._cache_bytes, 32 * 1024 * 1024),
    cacheTtlMs: positive("_cache_ttl", raw._cache_ttl, 15 * 60_000),
    testAllowAddresses: allow,
    ...(base ? { searchBaseUrl: base.replace(/\/+$/, "") } : {}),
  };
}
