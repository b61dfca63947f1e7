// `[mcp_servers.X]` in agents.toml: a secret is only ever a reference, a name prefixes its tools, and
// what this version does not attach yet (HTTP servers, OpenAPI services) stops startup with the key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseConfig } from "../../src/config/load.js";

const refused = (toml: string, why: RegExp) =>
  assert.throws(
    () => parseConfig(toml, "agents.toml"),
    (err: unknown) => err instanceof ConfigError && why.test(err.message),
  );

test("a secret written into env is refused with its line: only env:NAME references", () => {
  refused(
    '[mcp_servers.gh]\ncommand = "gh-mcp"\nenv = { GITHUB_TOKEN = "ghp_literal" }\n',
    /agents\.toml:3: .*expected a reference `env:NAME`/,
  );
  const ok = parseConfig('[mcp_servers.gh]\ncommand = "gh-mcp"\nenv = { GITHUB_TOKEN = "env:GITHUB_TOKEN" }\n');
  assert.deepEqual(ok.mcpServers?.[0], {
    name: "gh",
    timeoutS: 60,
    privateHosts: [],
    kind: "stdio",
    command: "gh-mcp",
    args: [],
    env: { GITHUB_TOKEN: "env:GITHUB_TOKEN" },
    network: false,
    containment: "required",
    maxMessageBytes: 16 * 1024 * 1024,
  });
});

test("a server name with __ (which would make tool names ambiguous) is refused", () => {
  refused('[mcp_servers."a__b"]\ncommand = "x"\n', /a name of letters, digits, - and single _/);
});

test("a url server and an [openapi] table are refused, naming the key: not attached by this version", () => {
  refused(
    '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\n',
    /agents\.toml:2: .*servers over HTTP are not attached by this version/,
  );
  refused(
    '[openapi.pets]\nspec = "p.yaml"\nbase_url = "http://127.0.0.1:9"\n',
    /OpenAPI services are not attached by this version/,
  );
});
