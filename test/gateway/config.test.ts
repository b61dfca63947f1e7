// `[mcp_servers.X]` in agents.toml: a secret is only ever a reference, a name prefixes its tools, and
// a key that does not fit the kind of server stops startup naming it.
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

test("a url server is read with its headers by reference; keys of a started server are refused for it", () => {
  const ok = parseConfig(
    '[mcp_servers.web]\nurl = "https://mcp.example.com/mcp"\nheaders = { Authorization = "env:WEB_TOKEN" }\nprivate_hosts = ["mcp.lan"]\n',
  );
  assert.deepEqual(ok.mcpServers?.[0], {
    name: "web",
    timeoutS: 60,
    maxMessageBytes: 16 * 1024 * 1024,
    kind: "http",
    url: "https://mcp.example.com/mcp",
    headers: { Authorization: "env:WEB_TOKEN" },
    privateHosts: ["mcp.lan"],
  });
  refused(
    '[mcp_servers.web]\nurl = "https://x.example/mcp"\nheaders = { Authorization = "Bearer abc" }\n',
    /agents\.toml:3: .*expected a reference `env:NAME`/,
  );
  refused(
    '[mcp_servers.web]\nurl = "https://x.example/mcp"\nnetwork = true\n',
    /`mcp_servers\.web\.network` is for a server latch starts/,
  );
  refused(
    '[mcp_servers.gh]\ncommand = "gh"\nprivate_hosts = ["db.lan"]\n',
    /`mcp_servers\.gh\.private_hosts` is for a `url` server/,
  );
  refused('[mcp_servers.web]\nurl = "file:///etc/passwd"\n', /mcp_servers/);
});

test("an [openapi] table is read: spec against the config's folder, auth by reference only", () => {
  const ok = parseConfig(
    '[openapi.pets]\nspec = "specs/p.yaml"\nbase_url = "https://pets.example.com"\nauth = { bearer = "env:PET_TOKEN" }\nexclude = ["delete*"]\n',
    "/srv/latch/agents.toml",
  );
  assert.deepEqual(ok.openapi?.[0], {
    name: "pets",
    kind: "openapi",
    spec: "/srv/latch/specs/p.yaml",
    baseUrl: "https://pets.example.com",
    auth: { bearer: "env:PET_TOKEN" },
    include: [],
    exclude: ["delete*"],
    privateHosts: [],
    timeoutS: 60,
    maxResponseBytes: 4 * 1024 * 1024,
  });
  refused(
    '[openapi.pets]\nspec = "p.yaml"\nbase_url = "https://x.example"\nauth = { bearer = "literal-token" }\n',
    /expected a reference `env:NAME`/,
  );
  refused(
    '[mcp_servers.pets]\ncommand = "x"\n[openapi.pets]\nspec = "p.yaml"\nbase_url = "https://x.example"\n',
    /their tools would share `pets__`/,
  );
});
