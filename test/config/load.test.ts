// agents.toml: every error names the file, the line and the key, and what is accepted.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError, effectivePolicies, loadConfig, parseConfig } from "../../src/config/load.js";
import { localFsSettings } from "../../src/config/toolsets.js";
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
    const fs = localFsSettings(effectivePolicies(cfg, "reviewer").local_fs);
    assert.equal(fs.maxReadBytes, 5);
    assert.deepEqual(fs.deniedPathSubstrings, ["node_modules", ".git/"]);
    assert.equal(localFsSettings(effectivePolicies(cfg).local_fs).maxReadBytes, 100);
    assert.throws(() => effectivePolicies(cfg, "nobody"), /Unknown agent `nobody`; the config defines: reviewer/);
  });

  test("_allowed_dir narrows local_fs to a folder of the root", async () => {
    fx.write({ "src/a.txt": "in src\n", "top.txt": "at the top\n" });
    const host = await fx.host({ config: parseConfig('[tools_policies.local_fs]\n_allowed_dir = "src"\n') });
    assert.equal((await host.call("read_file", { path: "a.txt" })).status, "ok");
    const out = await host.call("read_file", { path: "../top.txt" });
    assert.equal(out.status, "refused");
  });
});
