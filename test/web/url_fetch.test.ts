// url_fetch through the whole call path against real servers on 127.0.0.1, reachable only through the
// operator's explicit `_test_allow_addresses`. Each attack is tried, then the server's request log,
// its closed sockets and latch's policy log are checked.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import zlib from "node:zlib";
import type { Config } from "../../src/config/load.js";
import { parseEnvelopeDef } from "../../src/policy/envelope-parse.js";
import { pageCache } from "../../src/web/cache.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { startServer, type TestServer } from "./server.js";

const fx = makeFixture("latch-web-");
let srv: TestServer;
const bomb = zlib.gzipSync(Buffer.alloc(200 * 1024 * 1024, "A")); // 200 MiB of text in ~200 KiB

before(async () => {
  srv = await startServer({
    "/page": (_q, r) => {
      r.writeHead(200, { "content-type": "text/html; charset=utf-8", "set-cookie": "sid=secret-session" });
      r.end(
        "<html><head><title>T</title><script>var leak = 'script-text';</script></head>" +
          "<body><h1>Hello</h1><p>A <a href='/x'>link</a> &amp; more.</p><ul><li>one</li><li>two</li></ul></body></html>",
      );
    },
    "/latin1": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" });
      r.end(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café\n" in Latin-1
    },
    "/bad-utf8": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain" });
      r.end(Buffer.from([0x6f, 0x6b, 0x20, 0xc3, 0x28, 0xff, 0x0a]));
    },
    "/png": (_q, r) => {
      r.writeHead(200, { "content-type": "image/png" });
      r.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
    },
    "/nul-text": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain" });
      r.end(Buffer.from("abc\0def"));
    },
    "/bomb": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      r.end(bomb);
    },
    "/slow": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain" });
      const t = setInterval(() => r.write("tick\n"), 100);
      r.on("close", () => clearInterval(t));
    },
    "/big-html": (_q, r) => {
      r.writeHead(200, { "content-type": "text/html" });
      r.end(
        `<html><body>${"<h2>Part</h2><p>Some <b>bold</b> text and <a href='/a'>a link</a>.</p>".repeat(5000)}<p>THE END</p></body></html>`,
      );
    },
    "/big": (_q, r) => {
      r.writeHead(200, { "content-type": "text/plain" });
      r.end("x".repeat(100_000));
    },
    "/to-metadata": (_q, r) => {
      r.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      r.end();
    },
    "/to-file": (_q, r) => {
      r.writeHead(301, { location: "file:///etc/passwd" });
      r.end();
    },
    "/to-other-host": (_q, r) => {
      r.writeHead(302, { location: "https://example.com/elsewhere" });
      r.end();
    },
    "/hop": (q, r) => {
      const n = Number(new URL(q.url!, "http://x").searchParams.get("n"));
      r.writeHead(302, { location: n > 0 ? `/hop?n=${n - 1}` : "/page" });
      r.end();
    },
  });
});
after(async () => {
  await srv.close();
  fx.cleanup();
});

const open = parseEnvelopeDef({ extends: "auto_edit", web: "allow" }, ["envelopes", "open"]);
function config(web: Record<string, string> = {}): Config {
  return {
    toolsPolicies: { web: { _test_allow_addresses: "127.0.0.1", ...web } },
    agents: {},
    envelopes: { open },
  };
}
const host = (web: Record<string, string> = {}) => fx.host({ config: config(web), envelope: "open" });
type R = { status: string; result?: any; reason?: string; code?: string; message?: string; display?: any };
const call = async (args: Record<string, unknown>, web: Record<string, string> = {}, signal?: AbortSignal) =>
  (await (await host(web)).call("url_fetch", args, { signal })) as R;

describe("url_fetch: what it fetches and how it shows it", () => {
  test("HTML becomes Markdown without scripts; no cookie is kept or sent; display data stays apart", async () => {
    pageCache.delete(`${srv.base}/page`);
    const r = await call({ url: `${srv.base}/page` });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.match(r.result.content, /^# Hello\n\nA \[link\]\(\/x\) & more\.\n\n- {1,3}one\n- {1,3}two$/);
    assert.doesNotMatch(r.result.content, /script-text/);
    assert.equal(r.result.status, 200);
    assert.equal(r.display.address, "127.0.0.1");
    assert.equal(r.result.address, undefined, "the address is display data, not model content");
    const text = await call({ url: `${srv.base}/page?again`, format: "text" });
    assert.match(text.result.content, /Hello\nA link & more\./);
    const seen = srv.requests.filter((q) => q.path.startsWith("/page"));
    assert.ok(seen.length >= 2);
    for (const q of seen) {
      assert.equal(q.headers.cookie, undefined);
      assert.equal(q.headers.authorization, undefined);
      assert.equal(q.headers["proxy-authorization"], undefined);
    }
  });

  test("non-UTF-8 text is decoded by its charset; invalid UTF-8 is flagged; binary is described, not shown", async () => {
    const l = await call({ url: `${srv.base}/latin1` });
    assert.equal(l.result.content, "café\n");
    const b = await call({ url: `${srv.base}/bad-utf8` });
    assert.equal(b.result.content, "ok \uFFFD(\uFFFD\n");
    assert.match(b.result.encoding_note, /not valid utf-8/);
    for (const p of ["/png", "/nul-text"]) {
      const x = await call({ url: `${srv.base}${p}` });
      assert.equal(x.status, "ok");
      assert.equal(x.result.binary, true, p);
      assert.equal(x.result.content, undefined);
    }
  });

  test("long content comes in pages within _max_output_bytes; later pages come from the cache", async () => {
    const before = srv.requests.length;
    const first = await call({ url: `${srv.base}/big?paged` }, { _max_output_bytes: "30000" });
    assert.equal(first.result.content.length, 30000);
    assert.equal(first.result.truncated, true);
    assert.equal(first.result.next_offset, 30000);
    assert.equal(first.result.total_chars, 100_000);
    const last = await call({ url: `${srv.base}/big?paged`, offset: 90000 }, { _max_output_bytes: "30000" });
    assert.equal(last.result.content.length, 10000);
    assert.equal(last.result.truncated, false);
    assert.equal(last.result.from_cache, true);
    assert.equal(srv.requests.length, before + 1, "one download for both pages");
  });
});

describe("url_fetch: big HTML", () => {
  test("a big page is converted off the main thread, once, and paged from the cache", async () => {
    const url = `${srv.base}/big-html`;
    pageCache.delete(url);
    const first = await call({ url });
    assert.equal(first.status, "ok", JSON.stringify(first).slice(0, 300));
    assert.match(first.result.content, /^## Part\n\nSome \*\*bold\*\* text and \[a link\]\(\/a\)\./);
    assert.equal(first.result.truncated, true);
    const cached = pageCache.get(url, 60_000);
    assert.ok(cached?.views?.has("markdown"), "the converted view is kept with the cached page");
    const last = await call({ url, offset: first.result.total_chars - 100 });
    assert.equal(last.result.from_cache, true);
    assert.match(last.result.content, /THE END$/);
  });

  test("the built CLI converts a big page through its bundled worker", async () => {
    const cfg = `${fx.base}/web.toml`;
    writeFileSync(
      cfg,
      '[tools_policies.web]\n_test_allow_addresses = "127.0.0.1"\n[envelopes.open]\nextends = "auto_edit"\nweb = "allow"\n',
    );
    const r = await runCli([
      "call",
      "url_fetch",
      JSON.stringify({ url: `${srv.base}/big-html?cli`, format: "text" }),
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--config",
      cfg,
      "--envelope",
      "open",
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout.slice(0, 500));
    assert.match(r.json.result.content, /^Part\nSome bold text and a link\./);
  });
});

describe("url_fetch: the attacks", () => {
  test("every spelling of a private address is refused before any connection", async () => {
    const p = srv.port;
    const spellings = [
      `http://127.0.0.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://017700000001:${p}/`,
      `http://127.1:${p}/`,
      `http://%31%32%37.0.0.1:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[0:0:0:0:0:ffff:7f00:1]:${p}/`,
      `http://[::127.0.0.1]:${p}/`,
      `http://[64:ff9b::7f00:1]:${p}/`,
      `http://[::1]:${p}/`,
      `http://0:${p}/`,
      `http://[::]:${p}/`,
      "http://10.1.2.3/",
      "http://172.16.0.1/",
      "http://192.168.1.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://0xa9.0xfe.0xa9.0xfe/",
      "http://2852039166/",
      "http://100.64.0.1/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://[fe80::1]/",
      "http://[fc00::1]/",
      "http://[ff02::1]/",
      "http://[2002:7f00:1::]/",
    ];
    const before = srv.requests.length;
    const h = await fx.host({ config: config({ _test_allow_addresses: "" }), envelope: "open" });
    for (const url of spellings) {
      const r = (await h.call("url_fetch", { url })) as R;
      assert.equal(r.status, "refused", `${url}: ${JSON.stringify(r)}`);
      assert.match(r.reason!, /address; url_fetch connects to public addresses only/, url);
    }
    assert.equal(srv.requests.length, before, "the server saw no request");
    const log = readFileSync(h.policyLog, "utf8");
    assert.equal(
      log.split("\n").filter((l) => l.includes('"tool":"url_fetch"') && l.includes('"final":"deny"')).length,
      spellings.length,
    );
  });

  test("the test allowance is exact: 127.0.0.1 opens neither ::ffff:127.0.0.1 nor 127.0.0.2", async () => {
    for (const url of [`http://[::ffff:127.0.0.1]:${srv.port}/page`, `http://127.0.0.2:${srv.port}/page`]) {
      const r = await call({ url });
      assert.equal(r.status, "refused", url);
    }
  });

  test("a name that resolves to loopback (localhost) is refused", async () => {
    const before = srv.requests.length;
    const r = await call({ url: `http://localhost:${srv.port}/page` }, { _test_allow_addresses: "" });
    assert.equal(r.status, "refused");
    assert.match(r.reason!, /`localhost` resolves to (127\.0\.0\.1|::1), which is a loopback address/);
    assert.equal(srv.requests.length, before);
  });

  test("file:, gopher:, data:, ftp: and javascript: are refused", async () => {
    for (const url of [
      "file:///etc/passwd",
      "gopher://127.0.0.1:70/",
      "data:text/plain,hi",
      "ftp://example.com/",
      "javascript:alert(1)",
    ]) {
      const r = await call({ url });
      assert.equal(r.status, "refused", url);
      assert.match(r.reason!, /scheme .* is not fetched/, url);
    }
  });

  test("a URL with user info is refused, and nothing is sent", async () => {
    const before = srv.requests.length;
    for (const url of [`http://user:pw@127.0.0.1:${srv.port}/page`, `http://token@127.0.0.1:${srv.port}/page`]) {
      const r = await call({ url });
      assert.equal(r.status, "refused", url);
      assert.match(r.reason!, /user name or password/);
    }
    assert.equal(srv.requests.length, before);
  });

  test("a redirect to the metadata address or to file: is refused; to another host it is handed back, not followed", async () => {
    const meta = await call({ url: `${srv.base}/to-metadata` });
    assert.equal(meta.status, "refused");
    assert.match(meta.reason!, /169\.254\.169\.254.*link-local/);
    const file = await call({ url: `${srv.base}/to-file` });
    assert.equal(file.status, "refused");
    assert.match(file.reason!, /scheme `file:`/);
    const other = await call({ url: `${srv.base}/to-other-host` });
    assert.equal(other.status, "ok");
    assert.equal(other.result.redirect, "https://example.com/elsewhere");
    assert.equal(other.result.content, undefined);
  });

  test("redirects on one host are followed up to 5; the sixth is an error", async () => {
    const ok = await call({ url: `${srv.base}/hop?n=4` });
    assert.equal(ok.status, "ok");
    assert.match(ok.result.final_url, /\/page$/);
    assert.equal(ok.display.redirects.length, 5);
    const tooMany = await call({ url: `${srv.base}/hop?n=5` });
    assert.equal(tooMany.status, "error");
    assert.equal(tooMany.code, "EREDIRECTS");
  });

  test("a gzip bomb stops at _max_fetch_bytes", async () => {
    const rss = process.memoryUsage().rss;
    const r = await call({ url: `${srv.base}/bomb` }, { _max_fetch_bytes: "1048576" });
    assert.equal(r.status, "ok", JSON.stringify(r).slice(0, 300));
    assert.match(r.result.download_cut, /cut at 1048576 bytes/);
    assert.equal(r.result.truncated, true);
    assert.equal(r.display.bytes, 1048576);
    assert.ok(process.memoryUsage().rss - rss < 150 * 1024 * 1024, "memory stayed bounded");
  });

  test("a slow body is stopped at _fetch_timeout and its connection closed", async () => {
    const closedBefore = srv.closed();
    const r = await call({ url: `${srv.base}/slow` }, { _fetch_timeout: "700" });
    assert.equal(r.status, "error");
    assert.equal(r.code, "ETIMEDOUT");
    for (let i = 0; i < 50 && srv.closed() === closedBefore; i++) await new Promise((d) => setTimeout(d, 20));
    assert.ok(srv.closed() > closedBefore, "the server saw the connection close");
  });

  test("cancellation stops a fetch in flight", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const r = await call({ url: `${srv.base}/slow?cancel` }, { _fetch_timeout: "20000" }, ac.signal);
    assert.equal(r.status, "error");
    assert.equal(r.code, "ECANCELED");
  });
});

describe("url_fetch: the cache", () => {
  test("cache_only never opens a connection: a miss is ENOTCACHED, a hit is served", async () => {
    const url = `${srv.base}/page?cache-only`;
    pageCache.delete(url);
    const before = srv.requests.length;
    // Sockets opened, not closed: an earlier test's socket may still be closing now.
    const openedBefore = srv.opened();
    const miss = await call({ url, cache_only: true });
    assert.equal(miss.status, "error");
    assert.equal(miss.code, "ENOTCACHED");
    assert.equal(srv.requests.length, before);
    assert.equal(srv.opened(), openedBefore, "no connection was even opened");
    await call({ url });
    const hit = await call({ url, cache_only: true });
    assert.equal(hit.status, "ok");
    assert.equal(hit.result.from_cache, true);
    assert.equal(srv.requests.length, before + 1);
  });

  test("the cache stays within _cache_bytes, oldest out first", async () => {
    const web = { _cache_bytes: "250000" };
    for (let i = 0; i < 5; i++) await call({ url: `${srv.base}/big?bound=${i}` }, web);
    assert.ok(pageCache.bytes <= 250_000, `cache holds ${pageCache.bytes} bytes`);
    const oldest = await call({ url: `${srv.base}/big?bound=0`, cache_only: true }, web);
    assert.equal(oldest.code, "ENOTCACHED");
    const newest = await call({ url: `${srv.base}/big?bound=4`, cache_only: true }, web);
    assert.equal(newest.status, "ok");
  });
});

describe("url_fetch: policy", () => {
  test("read_only denies, default asks (and without an approver refuses), deny_domains denies", async () => {
    const ro = await (
      await fx.host({ config: config(), envelope: "read_only" })
    ).call("url_fetch", { url: `${srv.base}/page` });
    assert.equal(ro.status, "refused");
    assert.match((ro as R).reason!, /web = deny/);
    const def = await (
      await fx.host({ config: config(), envelope: "default" })
    ).call("url_fetch", { url: `${srv.base}/page` });
    assert.equal(def.status, "refused");
    assert.match((def as R).reason!, /approval/);
    const denied = parseEnvelopeDef({ extends: "open", web: { grant: "allow", deny_domains: ["127.0.0.1"] } }, [
      "envelopes",
      "d",
    ]);
    const h = await fx.host({ config: { ...config(), envelopes: { open, d: denied } }, envelope: "d" });
    const before = srv.requests.length;
    const r = (await h.call("url_fetch", { url: `${srv.base}/page` })) as R;
    assert.equal(r.status, "refused");
    assert.match(r.reason!, /web\.deny_domains "127\.0\.0\.1"/);
    assert.equal(srv.requests.length, before);
  });
});
