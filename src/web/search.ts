// web_search behind a provider interface. The first provider is Exa (POST {base}/search with the
// `x-api-key` header; body {query, numResults, type, contents}; hits under `results`). The key comes
// from latch's startup environment only (EXA_API_KEY), never from config or model input; the base URL
// only from the operator's config. The key is never put in a result, an error or the log.
import { ToolError } from "../errors.js";
import type { WebSettings } from "../config/web.js";

export interface SearchHit {
  title: string;
  url: string;
  published?: string;
  author?: string;
  snippet: string;
}

interface SearchAnswer {
  hits: SearchHit[];
  /** Provider data for people (request id and the like), never sent to the model. */
  display: Record<string, unknown>;
}

export interface SearchProvider {
  name: string;
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer>;
}

const EXA_BASE_URL = "https://api.exa.ai";
/** Characters of page text asked for per hit: enough for a snippet, small enough to stay cheap. */
const SNIPPET_CHARS = 600;
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The provider this environment can use, or undefined (then web_search is not listed). */
export function searchProvider(env: Readonly<NodeJS.ProcessEnv>, settings: WebSettings): SearchProvider | undefined {
  const key = env.EXA_API_KEY?.trim();
  if (!key) return undefined;
  return exaProvider(key, settings.searchBaseUrl ?? EXA_BASE_URL, settings.timeoutMs);
}

function exaProvider(key: string, base: string, timeoutMs: number): SearchProvider {
  return {
    name: "exa",
    async search(query, limit, signal) {
      const deadline = AbortSignal.timeout(timeoutMs);
      const both = AbortSignal.any([signal, deadline]);
      const started = Date.now();
      let res: Response;
      try {
        res = await fetch(`${base}/search`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", "x-api-key": key },
          body: JSON.stringify({
            query,
            numResults: limit,
            type: "auto",
            contents: { text: { maxCharacters: SNIPPET_CHARS } },
          }),
          redirect: "error", // the key goes to the configured host and nowhere else
          signal: both,
        });
      } catch (err) {
        throw (
          stopped(signal, deadline, timeoutMs) ??
          new ToolError("EPROVIDER", `The search provider could not be reached (${(err as Error).message}).`)
        );
      }
      let text: string;
      try {
        text = await boundedText(res, MAX_RESPONSE_BYTES);
      } catch (err) {
        throw stopped(signal, deadline, timeoutMs) ?? err;
      }
      if (res.status === 401 || res.status === 403)
        throw new ToolError(
          "EAUTH",
          `The search provider refused the key (HTTP ${res.status}); check EXA_API_KEY in latch's environment.`,
        );
      if (res.status === 429)
        throw new ToolError("ERATELIMIT", "The search provider's rate limit was reached; wait, then retry.");
      if (!res.ok) throw new ToolError("EPROVIDER", `The search provider answered HTTP ${res.status}.`);
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        throw new ToolError("EPROVIDER", "The search provider's answer is not JSON.");
      }
      const results = (data as { results?: unknown }).results;
      if (!Array.isArray(results))
        throw new ToolError("EPROVIDER", "The search provider's answer has no `results` list.");
      const hits: SearchHit[] = [];
      for (const r of results.slice(0, limit)) {
        if (typeof r !== "object" || r === null) continue;
        const o = r as Record<string, unknown>;
        if (typeof o.url !== "string") continue;
        hits.push({
          title: str(o.title) ?? o.url,
          url: o.url,
          ...(str(o.publishedDate) ? { published: str(o.publishedDate) } : {}),
          ...(str(o.author) ? { author: str(o.author) } : {}),
          snippet: (
            str(o.text) ??
            (Array.isArray(o.highlights) ? o.highlights.filter((h) => typeof h === "string").join(" … ") : "")
          ).slice(0, SNIPPET_CHARS),
        });
      }
      const id = (data as { requestId?: unknown }).requestId;
      return {
        hits,
        display: {
          provider: "exa",
          ...(typeof id === "string" ? { request_id: id } : {}),
          elapsed_ms: Date.now() - started,
        },
      };
    },
  };
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

function stopped(signal: AbortSignal, deadline: AbortSignal, timeoutMs: number): ToolError | undefined {
  if (signal.aborted) return new ToolError("ECANCELED", "The search was cancelled.");
  if (deadline.aborted)
    return new ToolError("ETIMEDOUT", `The search took longer than ${timeoutMs} ms (_fetch_timeout) and was stopped.`);
  return undefined;
}

async function boundedText(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > max) {
      await res.body.cancel().catch(() => undefined); // the answer is refused either way
      throw new ToolError("EPROVIDER", `The search provider's answer is over ${max} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
