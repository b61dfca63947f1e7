// Fuzz: random TOML never crashes the config loader (every error names a key or a line), and random
// tool arguments never crash a tool (every bad argument gets a clear error, never EINTERNAL).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import fc from "fast-check";
import { ConfigError, parseConfig } from "../../src/config/load.js";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

const TABLES = [
  "tools_policies.local_fs",
  "tools_policies.local_shell",
  "tools_policies.catalog",
  "tools_policies.nope",
  "agents.a",
  "agents.a.tools_policies.local_fs",
  "envelopes.e",
  "envelopes.e.shell",
  "envelopes.e.files.write",
  "x",
];
const KEYS = [
  "_max_read_bytes",
  "_max_output_bytes",
  "_denied_path_substrings",
  "_allowed_dir",
  "_allowed_commands",
  "_tools",
  "tools",
  "envelope",
  "extends",
  "grant",
  "default_action",
  "blacklist",
  "prefix_allowlist",
  "policy_programs",
  "bogus",
  "files.read",
  "deny_paths",
];
const VALUES = fc.oneof(
  fc.constantFrom(
    '"1024"',
    '"-1"',
    '"abc"',
    '""',
    "12",
    "true",
    '["local_fs"]',
    '["git*"]',
    '"allow"',
    '"approve"',
    '"deny"',
    '"maybe"',
    "[1, 2]",
    '{ grant = "allow" }',
    '"default"',
    '"e"',
    '"**/.ssh/**"',
    "1979-05-27",
  ),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const lineArb = fc.oneof(
  fc.constantFrom(...TABLES).map((t) => `[${t}]`),
  fc.tuple(fc.constantFrom(...KEYS), VALUES).map(([k, v]) => `${k} = ${v}`),
  fc.constantFrom(
    "[[envelopes.e.always_deny]]",
    'tool = "*"',
    'when_path = "**/x"',
    "# comment",
    "",
    "=",
    "[",
    "a = ",
    '"unterminated',
  ),
  fc.string({ maxLength: 30 }),
);

test("random TOML: only ConfigError, and every error names a key or a line", () => {
  let errors = 0;
  fc.assert(
    fc.property(fc.array(lineArb, { maxLength: 14 }), (lines) => {
      const text = lines.join("\n");
      try {
        parseConfig(text, "agents.toml");
      } catch (err) {
        assert.ok(err instanceof ConfigError, `not a ConfigError for ${JSON.stringify(text)}: ${(err as Error).stack}`);
        assert.match(err.message, /agents\.toml:\d+|`[^`]+`/, `no key or line in: ${err.message}`);
        const at = /agents\.toml:(\d+)/.exec(err.message);
        if (at)
          assert.ok(
            Number(at[1]) >= 1 && Number(at[1]) <= lines.length + 1,
            `line ${at[1]} of a ${lines.length}-line file: ${err.message}`,
          );
        errors++;
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(errors > 500, "the generator produced bad files");
});

let fx: Fixture;
let host: Host;
before(async () => {
  fx = makeFixture();
  fx.write({ "a.txt": "alpha\nbeta\n", "src/b.ts": "export const b = 1;\n" });
  // Shell tools may only run `echo`: random arguments must not run random programs.
  const config = parseConfig(
    '[tools_policies.local_shell]\n_allowed_commands = "echo"\n[tools_policies.catalog]\n_tools = "echo"\n',
  );
  host = await fx.host({ config, approver: { name: "yes", request: async () => ({ approved: true, by: "fuzz" }) } });
});
after(() => fx.cleanup());

// A call that hangs fails its run (fast-check `timeout`) instead of stalling the suite.
test(
  "random arguments to every tool: a result, a refusal or a clear error, never a crash",
  { timeout: 300_000 },
  async () => {
    const valueArb = fc.oneof(
      fc.constantFrom(
        "a.txt",
        "src",
        "src/b.ts",
        ".",
        "..",
        "/etc/passwd",
        "a.txt\0",
        "",
        "*.ts",
        "alpha",
        "echo hi",
        "1#ZZZ",
      ),
      fc.integer({ min: -5, max: 1e6 }),
      fc.boolean(),
      fc.constant(null),
      fc.string({ maxLength: 20 }),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.object({ maxDepth: 1, maxKeys: 2 }),
    );
    const names = host.tools().map((t) => t.name);
    assert.ok(names.length >= 5);
    let seen = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...names),
        fc.dictionary(
          fc.constantFrom(
            "path",
            "pattern",
            "content",
            "old_string",
            "new_string",
            "start_line",
            "end_line",
            "command",
            "args",
            "tool_id",
            "arguments",
            "edits",
            "replacement",
            "bogus",
            "recursive",
            "include",
            "regex",
          ),
          valueArb,
          { maxKeys: 4 },
        ),
        async (tool, args) => {
          const out = await host.call(tool, args, { session: "fuzz" });
          assert.ok(["ok", "refused", "error"].includes(out.status), JSON.stringify(out));
          if (out.status === "error") {
            assert.notEqual(out.code, "EINTERNAL", `${tool} ${JSON.stringify(args)} crashed: ${out.message}`);
            assert.ok(out.message.length > 10, `an empty message for ${tool} ${JSON.stringify(args)}`);
            // A bad argument is named: the argument, the value or the path at fault, in backticks.
            if (out.code === "EINVAL")
              assert.match(
                out.message,
                /`[^`]+`/,
                `${tool} ${JSON.stringify(args)}: the error names nothing: ${out.message}`,
              );
          }
          if (out.status === "refused") assert.ok(out.reason.length > 10);
          seen++;
        },
      ),
      { numRuns: 1500, timeout: 30_000, interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true },
    );
    assert.equal(seen, 1500);
  },
);
