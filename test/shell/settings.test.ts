// The local_shell and catalog keys of agents.toml: accepted, typed, defaulted, and bad values stop
// startup with the key at fault.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, parseConfig } from "../../src/config/load.js";
import { DEFAULT_ENV_DENY, catalog, localShell } from "../../src/config/toolsets.js";

const localShellSettings = (raw: Record<string, string>) => localShell.parse(raw);
const catalogSettings = (raw: Record<string, string>) => catalog.parse(raw);

describe("local_shell and catalog settings", () => {
  test("defaults: no policy, 64 KiB per stream, 60 s timeout, the default env deny list", () => {
    const s = localShellSettings({});
    assert.equal(s.policyActive, false);
    assert.equal(s.maxOutputBytes, 65536);
    assert.equal(s.timeoutMs, 60000);
    assert.equal(s.maxTimeoutMs, 600000);
    assert.deepEqual(s.envDeny, DEFAULT_ENV_DENY);
    assert.deepEqual(catalogSettings({}), {
      tools: undefined,
      maxStreamBytes: 65536,
      timeoutMs: 5000,
      containment: "auto",
      network: false,
    });
  });

  test("any of _allowed_commands, _denied_commands or _allowed_dir makes a policy active", () => {
    assert.equal(localShellSettings({ _allowed_commands: "ls" }).policyActive, true);
    assert.equal(localShellSettings({ _denied_commands: "rm" }).policyActive, true);
    assert.equal(localShellSettings({ _allowed_dir: "src" }).policyActive, true);
    assert.equal(localShellSettings({ _allowed_paths: "/tmp", _env_deny: "X" }).policyActive, false);
  });

  test("catalog _tools: a list, or * for any", () => {
    assert.deepEqual(catalogSettings({ _tools: "ls, git" }).tools, ["ls", "git"]);
    assert.equal(catalogSettings({ _tools: "*" }).tools, "*");
  });

  test("agents.toml accepts the keys, and a bad value names the file, line and key", () => {
    const ok = parseConfig(
      '[tools_policies.local_shell]\n_allowed_commands = "git,ls"\n_timeout = "1000"\n[tools_policies.catalog]\n_tools = "*"\n',
      "a.toml",
    );
    assert.equal(ok.toolsPolicies.local_shell._allowed_commands, "git,ls");
    assert.throws(
      () => parseConfig('[tools_policies.local_shell]\n_timeout = "-1"\n', "a.toml"),
      (e: unknown) => e instanceof ConfigError && /a\.toml.*_timeout/s.test(e.message),
    );
    assert.throws(
      () => parseConfig('[tools_policies.local_shell]\n_timeout = "9000"\n_max_timeout = "1000"\n', "a.toml"),
      (e: unknown) => e instanceof ConfigError && /_timeout/.test(e.message),
    );
    assert.throws(
      () => parseConfig('[tools_policies.local_shell]\n_allowed_comands = "ls"\n', "a.toml"),
      (e: unknown) => e instanceof ConfigError && /_allowed_comands/.test(e.message),
    );
    assert.throws(
      () => parseConfig('[tools_policies.catalog]\n_max_stream_bytes = "lots"\n', "a.toml"),
      (e: unknown) => e instanceof ConfigError && /_max_stream_bytes/.test(e.message),
    );
  });
});
