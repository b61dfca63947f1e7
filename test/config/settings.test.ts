// A host's toolset settings are parsed once, when it is made: every call's tools read the same frozen
// values (issue 19: local_shell and run_tool used to parse them 3–4 times per call).
import assert from "node:assert/strict";
import { after, describe, mock, test } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import { ConfigError, parseConfig } from "../../src/config/load.js";
import { settingsSchema } from "../../src/config/settings.js";
import { makeFixture } from "../helpers/fixture.js";

const CONFIG = `
[tools_policies.local_shell]
_allowed_commands = "echo,ls"
_timeout = "20000"
_max_timeout = "30000"
[tools_policies.catalog]
_tools = "echo"
[tools_policies.local_fs]
_max_output_bytes = "4096"
[tools_policies.web]
_max_output_bytes = "2048"
[agents.tight]
[agents.tight.tools_policies.local_shell]
_timeout = "40000"
`;

describe("toolset settings: one parse per host", () => {
  const fx = makeFixture("latch-settings-");
  after(() => fx.cleanup());

  test("a host making many calls of every settings reader parses its settings once", async () => {
    fx.write({ "a.txt": "hello\n" });
    // zod binds a schema's methods on their first read; read it once so mock.method finds an own method.
    assert.equal(typeof settingsSchema.safeParse, "function");
    const parse = mock.method(settingsSchema, "safeParse");
    try {
      const host = await fx.host({ config: parseConfig(CONFIG, "agents.toml"), approver: yesApprover });
      assert.equal(parse.mock.callCount(), 1, "createHost parses once");
      for (let i = 0; i < 5; i++) {
        const sh = await host.call("local_shell", { command: "echo hi" });
        assert.equal(sh.status, "ok", JSON.stringify(sh));
        assert.equal((await host.call("run_tool", { tool_id: "echo", arguments: ["x"] })).status, "ok");
        assert.equal((await host.call("read_file", { path: "a.txt", force: true })).status, "ok");
        assert.equal((await host.explain("local_shell", { command: "ls" })).decision, "allow");
        const refused = await host.call("local_shell", { command: "cat a.txt" });
        assert.equal(refused.status, "refused");
      }
      assert.equal(parse.mock.callCount(), 1, "no call parsed the settings again");
      // The values every call read: typed, and frozen, since every call shares them.
      assert.equal(host.settings.local_shell.timeoutMs, 20000);
      assert.deepEqual(host.settings.catalog.tools, ["echo"]);
      assert.equal(host.settings.local_fs.maxOutputBytes, 4096);
      assert.ok(
        Object.isFrozen(host.settings.local_shell) && Object.isFrozen(host.settings.local_shell.allowedCommands),
      );
      assert.throws(() => host.settings.local_shell.allowedCommands.push("rm"), TypeError);
    } finally {
      parse.mock.restore();
    }
  });

  test("an agent's key that clashes with a global one stops the host, naming both layers and the key", async () => {
    // Each layer is valid alone (the file loads); together the agent's `_timeout` 40 s is over the global `_max_timeout` 30 s.
    const config = parseConfig(CONFIG, "/etc/latch/agents.toml");
    await assert.rejects(
      fx.host({ config, agent: "tight" }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /^\/etc\/latch\/agents\.toml: `tools_policies\.local_shell\._timeout` \(agent `tight`'s keys over the global ones\): Expected `_timeout` to be at most _max_timeout \(30000 ms\), got `40000`\.$/.test(
          err.message,
        ),
    );
  });

  test("a config built by hand (embedders) is checked by the same schema", async () => {
    await assert.rejects(
      fx.host({ config: { toolsPolicies: { local_shell: { _timeout: "soon" } }, agents: {} } }),
      /agents\.toml: `tools_policies\.local_shell\._timeout`: Expected `_timeout` to be a positive whole number/,
    );
    await assert.rejects(
      fx.host({ config: { toolsPolicies: { lokal_fs: {} }, agents: {} } }),
      /`tools_policies\.lokal_fs`: accepted: local_fs, ast, local_shell, catalog, web, skills/,
    );
  });
});
