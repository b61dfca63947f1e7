// The `web` axis of envelopes: built-ins ask (read_only denies), domain deny lists come before the
// tools table, allow lists before the grant, and bad domain entries are config errors.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseConfig, ConfigError } from "../../src/config/load.js";
import { BUILTIN_ENVELOPES } from "../../src/policy/builtin-envelopes.js";
import { describeEnvelope, evaluateEnvelope } from "../../src/policy/envelope-eval.js";
import {
  allDefinitions,
  parseEnvelopeDef,
  resolveEnvelope,
  type EnvelopeDef,
} from "../../src/policy/envelope-parse.js";
import { effectOf } from "../../src/policy/effect.js";
import { findTool, TOOLS } from "../../src/registry.js";
import type { Plan } from "../../src/tools/define.js";

function env(user: Record<string, unknown>, name: string) {
  const defs: Record<string, EnvelopeDef> = {};
  for (const [n, raw] of Object.entries(user)) defs[n] = parseEnvelopeDef(raw, ["envelopes", n]);
  return resolveEnvelope(name, allDefinitions(defs));
}
const fetchPlan = (...hosts: string[]): Plan => ({ hosts });
const decide = (e: ReturnType<typeof env>, tool: string, plan: Plan) =>
  evaluateEnvelope(e, { tool, effect: effectOf(findTool(tool)!, plan, { root: "/w" }), root: "/w" });

describe("envelope web axis", () => {
  test("built-ins: read_only denies the web, every other built-in asks", () => {
    for (const name of Object.keys(BUILTIN_ENVELOPES)) {
      const want = name === "read_only" ? "deny" : "approve";
      for (const tool of ["url_fetch", "web_search"]) {
        const d = decide(env({}, name), tool, fetchPlan("example.com"));
        assert.equal(d.action, want, `${name} ${tool}`);
        assert.match(d.origin!, /web\.grant$/);
      }
      assert.ok(describeEnvelope(env({}, name), TOOLS).some((l) => /web \(url_fetch, web_search\) →/.test(l)));
    }
  });

  test("allow_domains allows the domain and its subdomains only; others fall to the grant", () => {
    const e = env({ m: { extends: "default", web: { allow_domains: ["Example.com."] } } }, "m");
    assert.equal(decide(e, "url_fetch", fetchPlan("example.com")).action, "allow");
    assert.equal(decide(e, "url_fetch", fetchPlan("docs.example.com")).action, "allow");
    assert.equal(decide(e, "url_fetch", fetchPlan("badexample.com")).action, "approve");
    assert.equal(decide(e, "url_fetch", fetchPlan("example.com.evil.net")).action, "approve");
    // web_search names no host: the allow list never applies to it
    assert.equal(decide(e, "web_search", fetchPlan()).action, "approve");
  });

  test("deny_domains beats the tools table and allow_domains", () => {
    const e = env(
      {
        m: {
          extends: "auto_edit",
          tools: { url_fetch: "allow" },
          web: { grant: "allow", allow_domains: ["example.com"], deny_domains: ["ads.example.com"] },
        },
      },
      "m",
    );
    const d = decide(e, "url_fetch", fetchPlan("x.ads.example.com"));
    assert.equal(d.action, "deny");
    assert.match(d.reason, /web\.deny_domains "ads\.example\.com" matches `x\.ads\.example\.com`/);
    assert.equal(decide(e, "url_fetch", fetchPlan("example.com")).action, "allow");
  });

  test("a string is the grant; a child's lists replace its parent's", () => {
    const e = env({ p: { web: { deny_domains: ["a.com"] } }, c: { extends: "p", web: "allow" } }, "c");
    assert.equal(decide(e, "url_fetch", fetchPlan("a.com")).action, "deny");
    const e2 = env({ p: { web: { deny_domains: ["a.com"] } }, c: { extends: "p", web: { deny_domains: [] } } }, "c");
    assert.equal(decide(e2, "url_fetch", fetchPlan("a.com")).action, "approve");
  });

  test("bad web entries stop the config with file, line and key", () => {
    for (const [toml, want] of [
      [
        '[envelopes.m.web]\nallow_domains = ["https://example.com"]\n',
        /agents\.toml:2.*envelopes\.m\.web\.allow_domains.*host names/,
      ],
      ['[envelopes.m.web]\ndeny_domains = ["*.example.com"]\n', /envelopes\.m\.web\.deny_domains/],
      ['[envelopes.m.web]\ngrant = "maybe"\n', /envelopes\.m\.web\.grant.*allow, approve, deny/],
      ["[envelopes.m.web]\nallowed = []\n", /unknown key `envelopes\.m\.web\.allowed`/],
    ] as const) {
      assert.throws(
        () => parseConfig(toml, "agents.toml"),
        (err: Error) => err instanceof ConfigError && want.test(err.message),
        toml,
      );
    }
  });
});
