// agents.toml: every error names the file, the line and the key, and what is accepted.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError, loadConfig, parseConfig } from "../../src/config/load.js";
import { parseSettings } from "../../src/config/settings.js";
import { makeFixture } from "../helpers/fixture.js";

const bad = (text: string, re: RegExp) => {
  assert.throws(
    () => parseConfig(text, "/etc/latch/agents.toml"),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, re);
      return true;
    },
  );
};

describe("agents.toml errors", () => {
  test("invalid TOML names the line and column", () => {
    bad('[tools_policies.local_fs]\n_max_read_bytes = "1\n', /^\/etc\/latch\/agents\.toml:2:\d+: not valid TOML/);
  });
  test("an unknown key in a toolset names line, key and the accepted keys", () => {
    bad(
      '\n[tools_policies.local_fs]\n_max_read_bytes = "10"\n_max_reed_bytes = "10"\n',
      /agents\.toml:4: unknown key `tools_policies\.local_fs\._max_reed_bytes`; accepted: _allowed_dir, _max_read_bytes/,
    );
  });
  test("an unknown toolset", () => {
    bad('[tools_policies.local_fz]\n_x = "1"\n', /agents\.toml:1: unknown toolset `local_fz`/);
  });
  test("a table named after run_tool says its settings are catalog's", () => {
    bad(
      '[tools_policies.run_tool]\n_containment = "required"\n',
      /agents\.toml:1: unknown toolset `run_tool` in `tools_policies`; run_tool's settings .* are under \[tools_policies\.catalog\]/,
    );
  });
  test("a bad value uses the one template", () => {
    bad(
      '[tools_policies.local_fs]\n_max_output_bytes = "-1"\n',
      /agents\.toml:2: `tools_policies\.local_fs\._max_output_bytes`: Expected `_max_output_bytes` to be a positive whole number in a string, such as "1048576", got `-1`/,
    );
  });
  test("a number where a string belongs", () => {
    bad(
      "[tools_policies.local_fs]\n_max_read_bytes = 10\n",
      /agents\.toml:2: `tools_policies\.local_fs\._max_read_bytes`/,
    );
  });
  // One per value check that used to be hand-written (toolsets.ts, config/web.ts): now zod schemas.
  test("_containment and _network name the accepted words", () => {
    bad(
      '[tools_policies.local_shell]\n_containment = "yes"\n',
      /agents\.toml:2: `tools_policies\.local_shell\._containment`: Expected `_containment` to be "auto", "required" or "off", got `yes`\.$/,
    );
    bad(
      '[tools_policies.catalog]\n\n_network = "on"\n',
      /agents\.toml:3: `tools_policies\.catalog\._network`: Expected `_network` to be "deny" or "allow", got `on`\.$/,
    );
  });
  test("_timeout over _max_timeout, set or by default", () => {
    bad(
      '[tools_policies.local_shell]\n_timeout = "9000"\n_max_timeout = "1000"\n',
      /agents\.toml:2: `tools_policies\.local_shell\._timeout`: Expected `_timeout` to be at most _max_timeout \(1000 ms\), got `9000`\.$/,
    );
    bad(
      '[tools_policies.local_shell]\n_max_timeout = "1000"\n',
      /`tools_policies\.local_shell\._timeout`: Expected `_timeout` to be at most _max_timeout \(1000 ms\), got `60000 \(the default\)`\.$/,
    );
  });
  test("_ast_deadline is a duration", () => {
    bad(
      '[tools_policies.ast]\n_ast_deadline = "5 minutes"\n',
      /agents\.toml:2: `tools_policies\.ast\._ast_deadline`: Expected `_ast_deadline` to be a positive duration in a string, such as "5s" or "500ms", got `5 minutes`\.$/,
    );
  });
  test("web: _test_allow_addresses names the entry that is not an address; _search_base_url no credentials", () => {
    bad(
      '[tools_policies.web]\n_test_allow_addresses = "127.0.0.1, localhost"\n',
      /agents\.toml:2: `tools_policies\.web\._test_allow_addresses`: Expected `_test_allow_addresses` to be a comma-separated list of IP addresses such as 127\.0\.0\.1, got `localhost`\.$/,
    );
    bad(
      '[tools_policies.web]\n_search_base_url = "https://me:pw@api.example"\n',
      /agents\.toml:2: `tools_policies\.web\._search_base_url`: Expected `_search_base_url` to be an http\(s\) URL without credentials/,
    );
  });
  test("an agent's unknown toolset and unknown agent key", () => {
    bad(
      '[agents.r]\ntools = ["local_fs"]\n[agents.r.tools_policies.shell]\n_x = "1"\n',
      /agents\.toml:3: unknown toolset `shell` in `agents\.r\.tools_policies`; accepted: local_fs, ast, local_shell, catalog, web, skills\.$/,
    );
    bad(
      '[agents.r]\ntool = ["local_fs"]\n',
      /agents\.toml:2: unknown key `agents\.r\.tool`; accepted: description, tools/,
    );
  });
  // The envelope validator was hand-written too (policy/envelope-parse.ts); now the file's one zod check.
  test("envelope values: contained_mode, domain lists, tool actions, rule lists, a date for a table", () => {
    bad(
      '[envelopes.m]\nextends = "default"\n[envelopes.m.shell]\ncontained_mode = "rw"\n',
      /agents\.toml:4: Expected `envelopes\.m\.shell\.contained_mode` to be "read-only" or "workspace-write", got `rw`\.$/,
    );
    bad(
      '[envelopes.m.web]\nallow_domains = ["example.com", "https://x.org"]\n',
      /agents\.toml:2: `envelopes\.m\.web\.allow_domains` holds `https:\/\/x\.org`: domain lists take host names/,
    );
    bad(
      '[envelopes.m.tools]\nread_file = "allow"\nlocal_shell = "maybe"\n',
      /agents\.toml:3: Expected `envelopes\.m\.tools\.local_shell` to be one of allow, approve, deny, got `maybe`\.$/,
    );
    bad(
      '[envelopes.m]\nalways_deny = "rm"\n',
      /agents\.toml:2: Expected `envelopes\.m\.always_deny` to be a list of rules \(\{tool, when_path, when_command\}\), got `rm`\.$/,
    );
    bad(
      "[envelopes.m]\nfiles = 1979-05-27\n",
      /agents\.toml:2: Expected `envelopes\.m\.files` to be a table with read and write, got `"1979-05-27/,
    );
  });
  test("an unknown top-level key", () => {
    bad('[toolz_policies.local_fs]\n_max_read_bytes = "1"\n', /unknown key `toolz_policies`/);
  });
  test("agent tables are checked too", () => {
    bad(
      '[agents.r]\ntools = ["local_fs"]\n[agents.r.tools_policies.local_fs]\n_bogus = "1"\n',
      /agents\.toml:4: unknown key `agents\.r\.tools_policies\.local_fs\._bogus`/,
    );
  });
  test("an explicit config path that does not exist is an error; the default one may be absent", () => {
    assert.throws(() => loadConfig("/nonexistent/agents.toml", {}), /no such file/);
    const fx = makeFixture();
    try {
      assert.deepEqual(loadConfig(undefined, { HOME: fx.base, XDG_CONFIG_HOME: path.join(fx.base, "cfg") }), {
        toolsPolicies: {},
        agents: {},
      });
    } finally {
      fx.cleanup();
    }
  });
});

describe("agents.toml values", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  test("an agent's keys override the global ones key by key", () => {
    const file = path.join(fx.base, "agents.toml");
    writeFileSync(
      file,
      [
        "[tools_policies.local_fs]",
        '_max_read_bytes = "100"',
        '_denied_path_substrings = "node_modules,.git/"',
        "[agents.reviewer]",
        'tools = ["local_fs"]',
        "[agents.reviewer.tools_policies.local_fs]",
        '_max_read_bytes = "5"',
      ].join("\n"),
    );
    const cfg = loadConfig(undefined, { LATCH_CONFIG: file });
    assert.equal(cfg.file, file);
    const fs = parseSettings(cfg, "reviewer").local_fs;
    assert.equal(fs.maxReadBytes, 5);
    assert.deepEqual(fs.deniedPathSubstrings, ["node_modules", ".git/"]);
    assert.equal(parseSettings(cfg).local_fs.maxReadBytes, 100);
    assert.throws(() => parseSettings(cfg, "nobody"), /Unknown agent `nobody`; the config defines: reviewer/);
  });

  test("_allowed_dir narrows local_fs to a folder of the root", async () => {
    fx.write({ "src/a.txt": "in src\n", "top.txt": "at the top\n" });
    const host = await fx.host({ config: parseConfig('[tools_policies.local_fs]\n_allowed_dir = "src"\n') });
    assert.equal((await host.call("read_file", { path: "a.txt" })).status, "ok");
    const out = await host.call("read_file", { path: "../top.txt" });
    assert.equal(out.status, "refused");
  });
});
