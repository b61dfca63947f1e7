import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError, loadConfig, parseConfig } from "../../src/config/load.js";
import { DEV_COMMANDS } from "../../src/policy/builtin-envelopes.js";
import { RUNS_LATER } from "../../src/fs/protected.js";
import { QUARANTINE_GLOBS } from "../../src/fs/quarantine.js";
import { TOOLS } from "../../src/registry.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

const GOOD = `[tools_policies.local_fs]
_max_output_bytes = "32768"

[agents.reviewer]
tools = ["local_fs"]
envelope = "mine"

[envelopes.mine]
extends = "default"
default_action = "approve"
files.read = "allow"
timeout = 60
[envelopes.mine.files.write]
grant = "approve"
deny_paths = ["**/generated/**"]
[envelopes.mine.shell]
grant = "approve"
blacklist = ["mkfs", "shred"]
prefix_allowlist = ["go test", "ls", "cat"]
ask_always = ["rm", "sudo"]
[[envelopes.mine.always_deny]]
tool = "*"
when_path = "**/secrets/**"

[envelopes.kid]
extends = "mine"
`;

function fails(text: string, re: RegExp): void {
  assert.throws(
    () => parseConfig(text, "/cfg/agents.toml"),
    (e: Error) => e instanceof ConfigError && re.test(e.message),
    text,
  );
}

describe("agents.toml: envelopes and policy_programs", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("accepts [envelopes.NAME], [agents.X] envelope and policy_programs (relative to the file)", () => {
    const cfg = parseConfig(GOOD, "/cfg/agents.toml");
    assert.deepEqual(Object.keys(cfg.envelopes!), ["mine", "kid"]);
    assert.equal(cfg.agents.reviewer.envelope, "mine");
    assert.deepEqual(cfg.envelopes!.mine.shell!.prefix_allowlist, ["go test", "ls", "cat"]);
    assert.equal(cfg.envelopes!.mine.timeout, 60);
  });

  test("policy_programs at the top level resolve against the config's folder", () => {
    const cfg = parseConfig('policy_programs = ["bin/check", "/abs/p"]\n' + GOOD, "/cfg/agents.toml");
    assert.deepEqual(cfg.policyPrograms, ["/cfg/bin/check", "/abs/p"]);
  });

  test("errors name the file, the line and the key", () => {
    fails(
      GOOD.replace('grant = "approve"\ndeny_paths', 'grant = "approve"\ncolour = "red"\ndeny_paths'),
      /^\/cfg\/agents\.toml:15: unknown key `envelopes\.mine\.files\.write\.colour`/,
    );
    fails(
      GOOD.replace('prefix_allowlist = ["go test", "ls", "cat"]', 'prefix_allowlist = ["git*"]'),
      /^\/cfg\/agents\.toml:19: `envelopes\.mine\.shell\.prefix_allowlist` holds `git\*`/,
    );
    fails(
      GOOD.replace('files.read = "allow"', 'files.read = "sometimes"'),
      /^\/cfg\/agents\.toml:11: Expected `envelopes\.mine\.files\.read` to be one of allow, approve, deny, got `sometimes`/,
    );
    fails(
      GOOD.replace('when_path = "**/secrets/**"', 'when_path = "**/secrets/**"\nwhen = "x"'),
      /^\/cfg\/agents\.toml:24: unknown key `envelopes\.mine\.always_deny\.0\.when`/,
    );
    fails(
      GOOD.replace(
        '[envelopes.kid]\nextends = "mine"',
        '[envelopes.kid]\nextends = "kid2"\n[envelopes.kid2]\nextends = "kid"',
      ),
      /^\/cfg\/agents\.toml:28: envelope `kid` extends in a cycle: kid → kid2 → kid/,
    );
    fails(
      GOOD.replace('envelope = "mine"', 'envelope = "nosuch"'),
      /^\/cfg\/agents\.toml:6: `agents\.reviewer\.envelope` names the unknown envelope `nosuch`/,
    );
    fails(GOOD + '[envelopes.default]\nfiles.write = "allow"\n', /would redefine the built-in envelope `default`/);
    fails(
      GOOD + "[surprise]\nx = 1\n",
      /unknown key `surprise`; accepted at the top level: tools_policies, agents, envelopes, policy_programs, log/,
    );
  });

  test("the agent's envelope applies; --envelope wins over it", async () => {
    const cfg = parseConfig(GOOD, path.join(fx.base, "agents.toml"));
    const agentHost = await fx.host({ config: cfg, agent: "reviewer" });
    assert.equal(agentHost.envelope.name, "mine");
    const ex = await agentHost.explain("write_file", { path: "x/generated/a.ts", content: "" });
    assert.equal(ex.decision, "deny");
    assert.match(ex.reason, /files\.write\.deny_paths "\*\*\/generated\/\*\*"/);
    const flagHost = await fx.host({ config: cfg, agent: "reviewer", envelope: "read_only" });
    assert.equal(flagHost.envelope.name, "read_only");
    const plain = await fx.host({ config: cfg });
    assert.equal(plain.envelope.name, "auto_edit");
    await assert.rejects(fx.host({ config: cfg, envelope: "nosuch" }), /unknown envelope `nosuch`/);
  });

  test("latch config check prints the resolved rules in order, and fails on a bad file naming line and key", async () => {
    const file = path.join(fx.base, "check.toml");
    writeFileSync(file, GOOD);
    const r = await runCli(["config", "check", file, "--envelope", "kid"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: ok`));
    assert.match(r.stdout, /envelope kid \(extends mine → default\)/);
    assert.match(r.stdout, /approvals wait 60 s, then deny/);
    const rules = r.stdout
      .split("\n")
      .filter((l) => /^\s+\d+\. /.test(l))
      .map((l) => l.trim());
    assert.equal(rules[0], '1. always_deny: tool "*", when_path "**/.ssh/**" (from quarantine) → deny');
    // Each axis names the tools whose own definitions declare it (no second list to fall behind).
    const onAxis = (axis: string) =>
      TOOLS.filter((t) => t.axis === axis)
        .map((t) => t.name)
        .join(", ");
    assert.match(onAxis("files.read"), /outline.*ast_search/);
    assert.match(onAxis("files.write"), /apply_patch.*hash_edit/);
    const q = QUARANTINE_GLOBS.length; // the quarantine's rules come first
    assert.equal(rules[q], `${q + 1}. always_deny: tool "*", when_path "**/secrets/**" (from mine) → deny`);
    assert.equal(rules[q + 1], `${q + 2}. files.write.deny_paths: "**/generated/**" → deny`);
    assert.deepEqual(
      rules.slice(q + 2).map((l) => l.replace(/^\d+\. /, "")),
      [
        // inherited from default: reading and stopping the session's own background processes
        'tools."process_output" → allow',
        'tools."process_list" → allow',
        'tools."process_kill" → allow',
        `files.read (${onAxis("files.read")}) → allow`,
        `files.write (${onAxis("files.write")}) → approve`,
        'shell.blacklist: "mkfs" anywhere in the line → deny',
        'shell.blacklist: "shred" anywhere in the line → deny',
        // inherited from default: uncontained, the read-only tier shrinks; contained, developer commands run
        'shell.uncontained_allowlist (uncontained, or with network): every command starts with one of "ls", "pwd", "wc", "head", "tail", "cat", "stat", "file", no path outside the root → allow',
        'shell.prefix_allowlist (contained without network): every command starts with one of "go test", "ls", "cat" → allow, read-only workspace',
        `shell.contained_allowlist (contained without network): every command starts with one of those or ${DEV_COMMANDS.map((c) => `"${c}"`).join(", ")}, no path outside the root → allow, read-only workspace`,
        'shell.ask_always: "rm" → approve',
        'shell.ask_always: "sudo" → approve',
        `shell (${onAxis("shell")}) → approve`,
        `web (${onAxis("web")}) → approve`,
        "shell: a write of .git/config (git config, git remote add, git submodule add) → approve, naming each key; a key that runs a program → deny",
        `files.write to a file other programs run later (${RUNS_LATER.join(", ")}), where a rule here allows it → approve`,
        "default_action → approve",
      ],
    );
    const agent = await runCli(["config", "check", file, "--agent", "reviewer"]);
    assert.match(agent.stdout, /envelope mine \(extends default\)/);
    writeFileSync(file, GOOD.replace('ask_always = ["rm", "sudo"]', 'ask_always = ["rm", "sudo"]\nask_never = ["ls"]'));
    const bad = await runCli(["config", "check", file]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      new RegExp(
        `latch: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:21: unknown key \`envelopes\\.mine\\.shell\\.ask_never\``,
      ),
    );
  });
  test("latch config check --agent refuses what latch mcp --agent would: a clash across layers, an unknown toolset", async () => {
    const file = path.join(fx.base, "layers.toml");
    writeFileSync(
      file,
      [
        "[tools_policies.local_shell]",
        '_max_timeout = "60000"',
        "[agents.slow]",
        "[agents.slow.tools_policies.local_shell]",
        '_timeout = "120000"',
        "[agents.odd]",
        'tools = ["local_fs", "local_fss"]',
      ].join("\n"),
    );
    const plain = await runCli(["config", "check", file]);
    assert.equal(plain.code, 0, plain.stderr);
    const slow = await runCli(["config", "check", file, "--agent", "slow"]);
    assert.equal(slow.code, 1, slow.stdout);
    assert.match(slow.stderr, /`tools_policies\.local_shell\._timeout` \(agent `slow`'s keys over the global ones\)/);
    const odd = await runCli(["config", "check", file, "--agent", "odd"]);
    assert.equal(odd.code, 1, odd.stdout);
    assert.match(odd.stderr, /`agents\.odd\.tools` names the unknown toolset `local_fss`/);
    // The same file refused the same way where it matters: a host for that agent does not start.
    const cfg = loadConfig(file);
    await assert.rejects(fx.host({ config: cfg, agent: "slow" }), /_timeout/);
    await assert.rejects(fx.host({ config: cfg, agent: "odd" }), /unknown toolset `local_fss`/);
  });
});
