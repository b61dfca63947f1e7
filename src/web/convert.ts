// A downloaded body as text for the model: decoded by its charset (header, then <meta>, else UTF-8
// with replacement characters), HTML turned into Markdown (turndown) or plain text, binary bodies
// described instead of shown, and the result cut into pages within the output budget. HTML to
// Markdown or text is markdown.ts, loaded at the first conversion (turndown and its DOM are ~300 KB).

export type Format = "markdown" | "text" | "raw";

export interface Converted {
  /** Undefined for a binary body. */
  text?: string;
  /** The charset the body was decoded with, when it was text. */
  charset?: string;
  /** Replacement characters were needed: the body was not valid in its charset. */
  invalid?: boolean;
  html: boolean;
}

const TEXTUAL =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ecmascript|x-javascript|ld\+json|rss\+xml|atom\+xml|x-yaml|yaml|toml|x-sh|sql|graphql)|[^;]*\+(json|xml))/i;

function isHtml(contentType: string, body: Buffer): boolean {
  if (/^\s*(text\/html|application\/xhtml\+xml)/i.test(contentType)) return true;
  if (contentType.trim() !== "") return false;
  return /^\s*(<!doctype html|<html)/i.test(body.subarray(0, 512).toString("latin1"));
}

/** The body decoded as text (undefined when binary); HTML is left as HTML here (see htmlTo in markdown.ts). */
export function decodeBody(body: Buffer, contentType: string): Converted {
  const html = isHtml(contentType, body);
  const declared = contentType.trim() !== "";
  if ((declared && !TEXTUAL.test(contentType.trim()) && !html) || body.subarray(0, 8192).includes(0)) return { html };
  const charset = pickCharset(contentType, body, html);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: false });
  } catch {
    decoder = new TextDecoder("utf-8", { fatal: false }); // an unknown label: UTF-8, with replacements shown
  }
  const text = decoder.decode(body);
  return { html, text, charset: decoder.encoding, ...(text.includes("\uFFFD") ? { invalid: true } : {}) };
}

function pickCharset(contentType: string, body: Buffer, html: boolean): string {
  const header = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (header) return header.toLowerCase();
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (html) {
    const head = body.subarray(0, 4096).toString("latin1");
    const meta = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
    if (meta) return meta.toLowerCase();
  }
  return "utf-8";
}

/** One page of `text` from character `offset`, within `maxBytes` of UTF-8, never splitting a surrogate pair. */
export function page(text: string, offset: number, maxBytes: number): { content: string; next?: number } {
  const start = Math.min(offset, text.length);
  let end = Math.min(text.length, start + maxBytes);
  while (end > start && Buffer.byteLength(text.slice(start, end)) > maxBytes) {
    const over = Buffer.byteLength(text.slice(start, end)) - maxBytes;
    end -= Math.max(1, Math.ceil(over / 3));
  }
  if (end < text.length && end > start && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  return { content: text.slice(start, end), ...(end < text.length ? { next: end } : {}) };
}
