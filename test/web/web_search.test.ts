// web_search against a fake Exa on 127.0.0.1 (the base URL set by operator config): listed only with
// EXA_API_KEY in latch's own environment, the key sent only as the provider's header and never shown,
// results apart from display data, truncation reported, cancellation honoured.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import type http from "node:http";
import { after, before, describe, test } from "node:test";
import { ConfigError, parseConfig, type Config } from "../../src/config/load.js";
import { parseEnvelopeDef } from "../../src/policy/envelope-parse.js";
import { makeFixture } from "../helpers/fixture.js";
import { stdioClient } from "../helpers/mcp.js";
import { startServer, type TestServer } from "./server.js";
import { expectError } from "../helpers/expect.js";

const KEY = "exa-test-key-" + Math.random().toString(36).slice(2);
const fx = makeFixture("latch-search-");
let fake: TestServer;
let lastBody: any;

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let s = "";
    req.on("data", (d) => (s += d));
    req.on("end", () => resolve(JSON.parse(s)));
  });
}

before(async () => {
  fake = await startServer({
    "/search": (req, res) => void answer(req, res),
  });
});

async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
  lastBody = await readJson(req);
  if (req.headers["x-api-key"] !== KEY) {
    res.writeHead(401, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: "bad key" }));
  }
  if (lastBody.query === "hang") return; // never answers
  const n = lastBody.numResults as number;
  const long = lastBody.query === "long";
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      requestId: "req-123",
      results: Array.from({ length: n }, (_, i) => ({
        id: `https://example.com/${i}`,
        url: `https://example.com/${i}`,
        title: `Result ${i}`,
        publishedDate: "2026-01-01",
        author: null,
        text: long ? "lorem ipsum ".repeat(500) : `About ${lastBody.query}, part ${i}.`,
      })),
    }),
  );
}

after(async () => {
  await fake.close();
  fx.cleanup();
});

const open = parseEnvelopeDef({ extends: "auto_edit", web: "allow" }, ["envelopes", "open"]);
const config = (web: Record<string, string> = {}): Config => ({
  toolsPolicies: { web: { _search_base_url: fake.base, ...web } },
  agents: {},
  envelopes: { open },
});
const env = (key?: string) => ({ PATH: process.env.PATH ?? "", HOME: fx.base, ...(key ? { EXA_API_KEY: key } : {}) });

describe("web_search", () => {
  test("no key in latch's environment: the tool is not listed, and a call to it is unknown", async () => {
    const h = await fx.host({ config: config(), envelope: "open", env: env() });
    assert.ok(!h.tools().some((t) => t.name === "web_search"));
    const r = await h.call("web_search", { query: "x" });
    assert.equal(expectError(r).code, "EUNKNOWNTOOL");
  });

  test("the key cannot come from config or from the model", async () => {
    assert.throws(
      () => parseConfig('[tools_policies.web]\nEXA_API_KEY = "k"\n', "agents.toml"),
      (e: Error) => e instanceof ConfigError && /EXA_API_KEY/.test(e.message),
    );
    const h = await fx.host({ config: config(), envelope: "open", env: env(KEY) });
    const r = await h.call("web_search", { query: "x", api_key: "other" });
    assert.equal(expectError(r).code, "EINVAL");
  });

  test("results from the provider; the key only in its header; display data apart; log without the key", async () => {
    const h = await fx.host({ config: config(), envelope: "open", env: env(KEY) });
    assert.ok(h.tools().some((t) => t.name === "web_search"));
    const r = (await h.call("web_search", { query: "node streams", limit: 3 })) as any;
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(lastBody.numResults, 3);
    assert.equal(lastBody.query, "node streams");
    assert.equal(fake.requests.at(-1)!.headers["x-api-key"], KEY);
    assert.equal(r.result.count, 3);
    assert.equal(r.result.truncated, false);
    assert.deepEqual(r.result.results[1], {
      title: "Result 1",
      url: "https://example.com/1",
      published: "2026-01-01",
      snippet: "About node streams, part 1.",
    });
    assert.equal(r.display.request_id, "req-123");
    assert.equal(JSON.stringify(r.result).includes("req-123"), false);
    assert.equal(JSON.stringify(r).includes(KEY), false);
    assert.equal(readFileSync(h.policyLog, "utf8").includes(KEY), false);
  });

  test("results over _max_output_bytes are cut and reported", async () => {
    const h = await fx.host({ config: config({ _max_output_bytes: "4000" }), envelope: "open", env: env(KEY) });
    const r = (await h.call("web_search", { query: "long", limit: 10 })) as any;
    assert.equal(r.status, "ok");
    assert.equal(r.result.truncated, true);
    assert.ok(Buffer.byteLength(JSON.stringify(r.result.results)) <= 4000);
    assert.ok(r.result.results.length >= 1);
  });

  test("a refused key is EAUTH and the message does not hold it", async () => {
    const h = await fx.host({ config: config(), envelope: "open", env: env("wrong-key-zzz") });
    const r = (await h.call("web_search", { query: "x" })) as any;
    assert.equal(r.code, "EAUTH");
    assert.doesNotMatch(r.message, /wrong-key-zzz/);
  });

  test("cancellation stops a search that hangs; the time limit too", async () => {
    const h = await fx.host({ config: config(), envelope: "open", env: env(KEY) });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = (await h.call("web_search", { query: "hang" }, { signal: ac.signal })) as any;
    assert.equal(r.code, "ECANCELED");
    const slow = await fx.host({ config: config({ _fetch_timeout: "300" }), envelope: "open", env: env(KEY) });
    const t = (await slow.call("web_search", { query: "hang" })) as any;
    assert.equal(t.code, "ETIMEDOUT");
  });

  test("read_only denies it; the built-in default asks", async () => {
    const ro = (await (
      await fx.host({ config: config(), envelope: "read_only", env: env(KEY) })
    ).call("web_search", { query: "x" })) as any;
    assert.equal(ro.status, "refused");
    const before = fake.requests.length;
    const def = (await (
      await fx.host({ config: config(), envelope: "default", env: env(KEY) })
    ).call("web_search", { query: "x" })) as any;
    assert.equal(def.status, "refused");
    assert.match(def.reason, /approval/);
    assert.equal(fake.requests.length, before, "nothing reached the provider");
  });

  test("over MCP stdio: listed with the key, absent without it", async () => {
    const cfg = `${fx.base}/search.toml`;
    writeFileSync(cfg, `[tools_policies.web]\n_search_base_url = "${fake.base}"\n`);
    for (const [key, listed] of [
      ["", false],
      [KEY, true],
    ] as const) {
      const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state, "--config", cfg], undefined, {
        EXA_API_KEY: key,
      });
      try {
        const { tools } = await client.listTools();
        assert.equal(
          tools.some((t) => t.name === "web_search"),
          listed,
          `key ${key ? "set" : "unset"}`,
        );
        assert.ok(tools.some((t) => t.name === "url_fetch"));
      } finally {
        await client.close();
      }
    }
  });
});
