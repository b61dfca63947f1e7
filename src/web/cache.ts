// The page cache: process-wide (every host and session in this process shares it, as the tools guide
// asks), bounded in bytes and in age, least recently used out first. A miss never fetches: the caller
// decides. Only successful fetches are stored; the stored body is the decompressed, capped download.

import type { Fetched } from "./fetch.js";

/** A successful fetch as stored: the download (cut at the size cap), when it was fetched, its views. */
export interface CachedPage extends Pick<Fetched, "url" | "finalUrl" | "status" | "contentType" | "body" | "cut"> {
  fetchedAt: number;
  /** Converted views of the body (by format), kept so later pages need no second conversion. */
  views?: Map<string, string>;
}

class PageCache {
  private readonly entries = new Map<string, CachedPage>();
  private size = 0;

  /** The page when present and younger than `ttlMs`; a hit becomes the most recently used. */
  get(url: string, ttlMs: number, now = Date.now()): CachedPage | undefined {
    const hit = this.entries.get(url);
    if (!hit) return undefined;
    this.entries.delete(url);
    if (now - hit.fetchedAt > ttlMs) {
      this.size -= cost(hit);
      return undefined;
    }
    this.entries.set(url, hit);
    return hit;
  }

  /** Store a page, then evict the oldest until the total is within `maxBytes`; a page larger than that is not kept. */
  put(page: CachedPage, maxBytes: number): void {
    this.delete(page.url);
    if (cost(page) > maxBytes) return;
    this.entries.set(page.url, page);
    this.size += cost(page);
    for (const [url, p] of this.entries) {
      if (this.size <= maxBytes) break;
      this.entries.delete(url);
      this.size -= cost(p);
    }
  }

  /** Keep a converted view with its page, counted against `maxBytes` like the body. */
  addView(page: CachedPage, format: string, text: string, maxBytes: number): void {
    if (this.entries.get(page.url) !== page || page.views?.has(format)) return;
    this.delete(page.url);
    (page.views ??= new Map()).set(format, text);
    this.put(page, maxBytes);
  }

  delete(url: string): void {
    const old = this.entries.get(url);
    if (old) {
      this.entries.delete(url);
      this.size -= cost(old);
    }
  }

  get bytes(): number {
    return this.size;
  }

  get count(): number {
    return this.entries.size;
  }
}

function cost(p: CachedPage): number {
  let views = 0;
  for (const v of p.views?.values() ?? []) views += v.length * 2; // UTF-16 in memory
  return p.body.length + views + p.url.length + p.finalUrl.length + p.contentType.length + 64;
}

/** The one cache of this process. */
export const pageCache = new PageCache();
