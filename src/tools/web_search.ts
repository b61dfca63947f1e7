import { z } from "zod";
import { ToolError } from "../errors.js";
import { page } from "../web/convert.js";
import { searchProvider, type SearchHit } from "../web/search.js";
import { defineTool } from "./define.js";

const schema = () =>
  z.strictObject({
    query: z.string().trim().min(1).max(2000).describe("What to search the web for."),
    limit: z.number().int().min(1).max(20).default(5).describe("How many results, 1–20. Default 5."),
  });

export default defineTool({
  name: "web_search",
  aliases: [],
  toolset: "web",
  axis: "web",
  shapes: ["workspace", "client", "host"],
  annotations: { readOnly: true, destructive: false, idempotent: false },
  description:
    "Search the web. Returns up to `limit` results, each {title, url, published?, author?, snippet}. Open a result with url_fetch.",
  schema,
  // Listed only when latch's own environment holds a provider key (EXA_API_KEY).
  enabled: (settings, startupEnv = {}) => searchProvider(startupEnv, settings.web) !== undefined,
  resultBudget: (env) => env.settings.web.maxOutputBytes,
  async plan() {
    return { paths: [], hosts: [] };
  },
  async run(args, _plan, env) {
    const settings = env.settings.web;
    const provider = searchProvider(env.startupEnv, settings);
    if (!provider)
      throw new ToolError("EUNAVAILABLE", "No search provider is configured (set EXA_API_KEY in latch's environment).");
    const answer = await provider.search(args.query, args.limit, env.signal);
    const { results, truncated } = fit(answer.hits, settings.maxOutputBytes);
    return {
      result: { query: args.query, results, count: results.length, truncated },
      display: answer.display,
    };
  },
});

/** Hits within the output budget: snippets are shortened first, then the last hits dropped. */
function fit(hits: SearchHit[], maxBytes: number): { results: SearchHit[]; truncated: boolean } {
  let results = hits;
  const size = () => Buffer.byteLength(JSON.stringify(results));
  if (size() <= maxBytes) return { results, truncated: false };
  const share = Math.max(80, Math.floor(maxBytes / Math.max(1, hits.length)) - 300);
  results = hits.map((h) => ({ ...h, snippet: page(h.snippet, 0, share).content }));
  while (results.length > 1 && size() > maxBytes) results = results.slice(0, -1);
  return { results, truncated: true };
}
