import { z } from "zod";
import { ToolError } from "../errors.js";
import { pageCache, type CachedPage } from "../web/cache.js";
import { decodeBody, page, type Format } from "../web/convert.js";
import { convertHtml } from "../web/html-pool.js";
import { checkUrl, protectedFetch } from "../web/fetch.js";
import { defineTool } from "./define.js";

const schema = () =>
  z.strictObject({
    url: z.string().min(1).describe("An http or https URL of a public page."),
    format: z
      .enum(["markdown", "text", "raw"])
      .default("markdown")
      .describe("markdown (default): HTML converted to Markdown; text: HTML without markup; raw: the body as sent."),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Character offset in the converted content: pass the next_offset of a previous page."),
    cache_only: z
      .boolean()
      .default(false)
      .describe("Answer only from latch's page cache; never open a connection (an uncached URL is an error)."),
  });

interface FetchPlan {
  paths: [];
  /** The host the envelope's web domain rules look at, and the URL (the effect's: src/policy/effect.ts). */
  hosts: string[];
  urls: [string];
}

export default defineTool<z.output<ReturnType<typeof schema>>, FetchPlan>({
  name: "url_fetch",
  aliases: ["web_fetch"],
  toolset: "web",
  axis: "web",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    "Fetch a public web page (http or https) and return it as Markdown (or text, or raw), in pages: pass next_offset as offset for more.",
    "Private, loopback and link-local addresses are refused; no cookies or credentials are sent. A redirect to another host is not followed: the result names it, fetch it with another call.",
    "Pages are cached for a while; later pages of the same URL come from the cache, and cache_only never goes to the network.",
  ].join(" "),
  schema,
  resultBudget: (env) => env.settings.web.maxOutputBytes,
  async plan(args, env) {
    const url = checkUrl(args.url, env.settings.web);
    return { paths: [], hosts: [url.hostname.replace(/\.$/, "")], urls: [url.href] };
  },
  async run(args, plan, env) {
    const [url] = plan.urls;
    const settings = env.settings.web;
    let cached = pageCache.get(url, settings.cacheTtlMs);
    const fromCache = cached !== undefined;
    let display: Record<string, unknown> = { cache: fromCache ? "hit" : "miss" };
    if (!cached) {
      if (args.cache_only)
        throw new ToolError(
          "ENOTCACHED",
          `${url} is not in latch's page cache (or its copy expired); call url_fetch without cache_only to fetch it.`,
        );
      const f = await protectedFetch(new URL(url), settings, env.signal);
      display = { ...display, address: f.address, redirects: f.redirects, bytes: f.body.length };
      if (f.crossHostRedirect)
        return {
          result: {
            url: f.url,
            status: f.status,
            redirect: f.crossHostRedirect,
            note: "The page redirects to another host, which was not fetched. Call url_fetch with the redirect URL if you want it.",
          },
          display,
        };
      cached = { ...f, fetchedAt: Date.now() } satisfies CachedPage;
      if (f.status >= 200 && f.status < 300) pageCache.put(cached, settings.cacheBytes);
    }
    const conv = decodeBody(cached.body, cached.contentType);
    if (conv.text !== undefined && conv.html && args.format !== "raw")
      conv.text = await htmlView(cached, conv.text, args.format, settings.cacheBytes, settings.timeoutMs, env.signal);
    const head = {
      url: cached.url,
      ...(cached.finalUrl !== cached.url ? { final_url: cached.finalUrl } : {}),
      status: cached.status,
      content_type: cached.contentType,
      from_cache: fromCache,
      ...(cached.cut ? { download_cut: `the body was cut at ${settings.maxFetchBytes} bytes (_max_fetch_bytes)` } : {}),
    };
    if (conv.text === undefined)
      return {
        result: {
          ...head,
          binary: true,
          bytes: cached.body.length,
          truncated: cached.cut,
          note: "Binary content is not shown.",
        },
        display,
      };
    const p = page(conv.text, args.offset, settings.maxOutputBytes);
    return {
      result: {
        ...head,
        format: conv.html ? args.format : "raw",
        ...(conv.invalid ? { encoding_note: `not valid ${conv.charset}; bad bytes shown as U+FFFD` } : {}),
        total_chars: conv.text.length,
        truncated: p.next !== undefined || cached.cut,
        ...(p.next !== undefined ? { next_offset: p.next } : {}),
        content: p.content,
      },
      display: { ...display, charset: conv.charset, fetched_at: new Date(cached.fetchedAt).toISOString() },
    };
  },
});

/** Small pages are converted here; big ones on a worker thread (bounded, cancellable). Kept with the cached page. */
async function htmlView(
  cached: CachedPage,
  html: string,
  format: Exclude<Format, "raw">,
  cacheBytes: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  const kept = cached.views?.get(format);
  if (kept !== undefined) return kept;
  // markdown.js (turndown and its DOM) loads at the first conversion, not at every start of the server.
  const text =
    html.length <= INLINE_HTML_CHARS
      ? (await import("../web/markdown.js")).htmlTo(html, format)
      : await convertHtml(html, format, timeoutMs, signal);
  pageCache.addView(cached, format, text, cacheBytes);
  return text;
}

/** Up to this size turndown takes tens of ms, about what starting a thread costs (bench/web-convert.ts). */
const INLINE_HTML_CHARS = 16 * 1024;
