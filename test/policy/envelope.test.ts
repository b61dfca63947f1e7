import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BUILTIN_ENVELOPES } from "../../src/policy/builtin-envelopes.js";
import { describeEnvelope, evaluateEnvelope } from "../../src/policy/envelope-eval.js";
import {
  allDefinitions,
  EnvelopeError,
  parseEnvelopeDef,
  resolveEnvelope,
  type EnvelopeDef,
} from "../../src/policy/envelope-parse.js";
import { effectOf, type Axis } from "../../src/policy/effect.js";
import { toolMatches } from "../../src/policy/envelope.js";
import picomatch from "picomatch";
import { findTool, TOOLS } from "../../src/registry.js";
import type { Plan } from "../../src/tools/define.js";

const ROOT = "/w/proj";
const HOME = "/home/u";

function filePlan(...rels: string[]): Plan {
  return {
    paths: rels.map((r) => ({
      input: r,
      abs: r.startsWith("/") ? r : `${ROOT}/${r}`,
      rel: r.startsWith("/") ? r : r,
      exists: true,
    })),
  };
}
function shellPlan(...argvs: string[][]): Plan {
  // Plans from the planner also say what their commands can do; these hand-made ones only read.
  const capabilities = {
    executesCode: false,
    writesFiles: false,
    runsWorkspaceCode: false,
    network: false,
    known: true,
    why: [],
  };
  return {
    steps: argvs.map((argv) => ({ argv, cwd: ROOT, program: `/usr/bin/${argv[0]}` })),
    commands: argvs,
    capabilities,
  };
}
function env(user: Record<string, unknown>, name: string) {
  const defs: Record<string, EnvelopeDef> = {};
  for (const [n, raw] of Object.entries(user)) defs[n] = parseEnvelopeDef(raw, ["envelopes", n]);
  return resolveEnvelope(name, allDefinitions(defs));
}
/** The envelope's decision on a plan, read by the axis the tool's own definition declares. */
function decide(e: ReturnType<typeof env>, tool: string, plan: Plan, axis?: Axis) {
  const spec = axis ? { axis } : findTool(tool);
  assert.ok(spec, `${tool} is a registered tool (or the test names its axis)`);
  return evaluateEnvelope(e, { tool, effect: effectOf(spec, plan, { root: ROOT, home: HOME }), root: ROOT });
}

describe("envelope order: first match wins", () => {
  test("1. always_deny beats every later rule, including tools and always_allow", () => {
    const e = env(
      {
        m: {
          default_action: "allow",
          tools: { write_file: "allow" },
          always_allow: [{ tool: "*" }],
          always_deny: [{ tool: "write_file", when_path: "secret/**" }],
        },
      },
      "m",
    );
    const d = decide(e, "write_file", filePlan("secret/a.txt"));
    assert.equal(d.action, "deny");
    assert.match(d.reason, /always_deny.*secret\/a\.txt/);
    assert.equal(decide(e, "write_file", filePlan("public/a.txt")).action, "allow");
  });

  test("2. deny_paths: write, then read; a read deny_path also closes writes", () => {
    const e = env(
      {
        m: {
          default_action: "allow",
          files: {
            read: { grant: "allow", deny_paths: ["private/**"] },
            write: { grant: "allow", deny_paths: ["gen/**"], approve_paths: ["private/**"] },
          },
        },
      },
      "m",
    );
    assert.equal(decide(e, "write_file", filePlan("gen/x.ts")).action, "deny");
    assert.match(decide(e, "write_file", filePlan("gen/x.ts")).reason, /files\.write\.deny_paths "gen\/\*\*"/);
    // write deny_paths do not touch reads
    assert.equal(decide(e, "read_file", filePlan("gen/x.ts")).action, "allow");
    assert.equal(decide(e, "read_file", filePlan("private/k.txt")).action, "deny");
    // a newline in the name is no way past the glob
    assert.equal(decide(e, "read_file", filePlan("private/k\n.txt")).action, "deny");
    assert.equal(decide(e, "write_file", filePlan("gen/a\nb/x.ts")).action, "deny");
    // deny beats approve_paths for the same path
    assert.equal(decide(e, "edit_file", filePlan("private/k.txt")).action, "deny");
  });

  test("3. approve_paths before tools and grants", () => {
    const e = env(
      { m: { tools: { edit_file: "allow" }, files: { write: { grant: "allow", approve_paths: ["**/*.lock"] } } } },
      "m",
    );
    const d = decide(e, "edit_file", filePlan("deep/package.lock"));
    assert.equal(d.action, "approve");
    assert.match(d.reason, /approve_paths/);
    assert.equal(decide(e, "edit_file", filePlan("a.ts")).action, "allow");
  });

  test("4. tools patterns, most specific first, before always_allow and the grant", () => {
    const e = env(
      {
        m: {
          default_action: "deny",
          files: { read: "deny" },
          tools: { "*": "deny", "read_*": "approve", read_file_range: "allow", "my_*": "allow" },
          always_allow: [{ tool: "read_file" }],
        },
      },
      "m",
    );
    assert.equal(decide(e, "read_file_range", filePlan("a")).action, "allow");
    assert.equal(decide(e, "read_file", filePlan("a")).action, "approve");
    assert.equal(decide(e, "my_tool", {}, "files.read").action, "allow");
    assert.equal(decide(e, "grep", {}).action, "deny");
  });

  test("5. always_allow beats the axis grant and default_action", () => {
    const e = env(
      {
        m: {
          default_action: "deny",
          files: { write: "deny" },
          always_allow: [{ tool: "write_file", when_path: "scratch/**" }],
        },
      },
      "m",
    );
    assert.equal(decide(e, "write_file", filePlan("scratch/t.txt")).action, "allow");
    assert.equal(decide(e, "write_file", filePlan("src/t.txt")).action, "deny");
  });

  test("6. axis grants bind by the axis each tool's own definition declares; no rule: default_action", () => {
    const e = env({ m: { default_action: "approve", files: { read: "deny" } } }, "m");
    const readers = TOOLS.filter((t) => t.axis === "files.read").map((t) => t.name);
    // outline, ast_search and skill were missing from the old name table and fell to default_action.
    for (const t of ["read_file", "grep", "outline", "ast_search", "skill"]) assert.ok(readers.includes(t), t);
    for (const t of readers) {
      const d = decide(e, t, filePlan("a"));
      assert.equal(d.action, "deny", t);
      assert.match(d.reason, new RegExp(`files.read = deny for ${t}$`));
    }
    const write = decide(e, "hash_edit", filePlan("a"));
    assert.equal(write.action, "approve");
    assert.match(write.reason, /no rule decides; default_action = approve/);
  });

  test("6. shell tiers: blacklist anywhere (inner commands too) → prefix_allowlist by whole tokens → ask_always → grant", () => {
    const e = env(
      {
        m: {
          shell: {
            grant: "deny",
            blacklist: ["shred"],
            prefix_allowlist: ["git status", "ls", "xargs"],
            ask_always: ["rm"],
          },
        },
      },
      "m",
    );
    assert.equal(decide(e, "local_shell", shellPlan(["git", "status", "-s"])).action, "allow");
    assert.equal(decide(e, "local_shell", shellPlan(["git", "statusx"])).action, "deny"); // not a whole-token match → grant
    assert.equal(decide(e, "local_shell", shellPlan(["/usr/bin/ls", "-la"])).action, "allow");
    // every step must match
    assert.equal(decide(e, "local_shell", shellPlan(["ls"], ["cat", "x"])).action, "deny");
    // a wrapper's inner command counts: xargs is allowlisted, shred inside it is blacklisted
    const wrapped: Plan = {
      steps: [{ argv: ["xargs", "shred"], cwd: ROOT, program: "/usr/bin/xargs" }],
      commands: [["xargs", "shred"], ["shred"]],
    };
    const d = decide(e, "local_shell", wrapped);
    assert.equal(d.action, "deny");
    assert.match(d.reason, /blacklist "shred"/);
    // an inner command that is not allowlisted keeps the line off the allowlist
    const inner: Plan = { steps: [{ argv: ["xargs", "rm"], cwd: ROOT }], commands: [["xargs", "rm"], ["rm"]] };
    assert.equal(decide(e, "local_shell", inner).action, "approve");
    assert.equal(decide(e, "run_tool", shellPlan(["rm", "-f", "x"])).action, "approve");
    // an unparsed line is never allowlisted, but its tokens still hit the blacklist
    assert.equal(decide(e, "local_shell", { raw: "ls $(weird)" }).action, "deny");
    assert.match(decide(e, "local_shell", { raw: "echo hi; shred -u f" }).reason, /blacklist/);
  });

  test("7. default_action when nothing else decides", () => {
    const e = env({ m: { default_action: "deny" } }, "m");
    assert.equal(decide(e, "write_file", filePlan("a")).action, "deny");
    assert.match(decide(e, "write_file", filePlan("a")).reason, /default_action = deny/);
    assert.equal(env({ m: {} }, "m").default_action, "approve");
  });
});

describe("extends", () => {
  test("a child's lists replace its parent's; scalars override; only always_* accumulate", () => {
    const e = env(
      {
        base: {
          default_action: "deny",
          shell: { grant: "approve", prefix_allowlist: ["ls", "cat"], blacklist: ["dd"] },
          tools: { a: "allow", b: "deny" },
          always_deny: [{ tool: "x" }],
          always_allow: [{ tool: "y" }],
        },
        kid: {
          extends: "base",
          shell: { prefix_allowlist: ["go test"] },
          tools: { b: "allow" },
          always_deny: [{ tool: "z" }],
          timeout: 30,
        },
      },
      "kid",
    );
    assert.deepEqual(e.chain, ["kid", "base"]);
    assert.equal(e.default_action, "deny");
    assert.deepEqual(e.shell.prefix_allowlist, ["go test"]);
    assert.deepEqual(e.shell.blacklist, ["dd"]);
    assert.equal(e.shell.grant, "approve");
    assert.deepEqual(e.tools, { a: "allow", b: "allow" });
    assert.deepEqual(
      e.always_deny.filter((r) => r.from !== "quarantine").map((r) => [r.tool, r.from]),
      [
        ["x", "base"],
        ["z", "kid"],
      ],
    );
    assert.deepEqual(
      e.always_allow.map((r) => r.tool),
      ["y"],
    );
    assert.equal(e.timeout, 30);
  });

  test("user envelopes extend built-ins", () => {
    const e = env({ mine: { extends: "default", shell: { prefix_allowlist: ["go test"] } } }, "mine");
    assert.equal(decide(e, "write_file", filePlan("a")).action, "approve");
    assert.equal(decide(e, "local_shell", shellPlan(["go", "test", "./..."])).action, "allow");
    assert.equal(decide(e, "local_shell", shellPlan(["ls"])).action, "approve");
  });

  test("cycles, unknown parents and chains deeper than 8 levels are errors", () => {
    assert.throws(
      () => env({ a: { extends: "b" }, b: { extends: "a" } }, "a"),
      (e: Error) => e instanceof EnvelopeError && /cycle: a → b → a/.test(e.message),
    );
    assert.throws(() => env({ a: { extends: "nope" } }, "a"), /unknown envelope `nope`/);
    const deep: Record<string, unknown> = { e0: {} };
    for (let i = 1; i <= 9; i++) deep[`e${i}`] = { extends: `e${i - 1}` };
    assert.throws(() => env(deep, "e9"), /more than 8 levels/);
    deep.e9 = undefined;
    delete deep.e9;
    assert.equal(env(deep, "e8").chain.length, 9);
  });

  test("unknown keys, bad actions and partial globs in command lists are errors with the key path", () => {
    const bad = (raw: unknown, re: RegExp, path: string) =>
      assert.throws(
        () => parseEnvelopeDef(raw, ["envelopes", "m"]),
        (e: Error) => e instanceof EnvelopeError && re.test(e.message) && e.keyPath.join(".") === path,
      );
    bad({ colour: "red" }, /unknown key `envelopes\.m\.colour`/, "envelopes.m.colour");
    bad({ files: { write: { grant: "maybe" } } }, /allow, approve, deny, got `maybe`/, "envelopes.m.files.write.grant");
    bad({ shell: { prefix_allowlist: ["git*"] } }, /`git\*`.*not globs/, "envelopes.m.shell.prefix_allowlist");
    bad({ shell: { blacklist: ["rm?"] } }, /not globs/, "envelopes.m.shell.blacklist");
    bad({ always_deny: [{ tool: "*", when_command: "curl*" }] }, /not globs/, "envelopes.m.always_deny.0.when_command");
    bad({ always_deny: [{ tool: "*", path: "x" }] }, /unknown key/, "envelopes.m.always_deny.0.path");
    bad({ on_timeout: "allow" }, /deny/, "envelopes.m.on_timeout");
    bad({ timeout: -1 }, /positive whole number/, "envelopes.m.timeout");
  });
});

describe("built-in envelopes", () => {
  const cases: Record<string, Record<string, string>> = {
    read_only: { read: "allow", write: "deny", shell_ls: "deny", shell_rm: "deny", other: "deny" },
    default: {
      read: "allow",
      write: "approve",
      shell_ls: "allow",
      shell_git_status: "allow",
      shell_rm: "approve",
      other: "approve",
    },
    auto_edit: {
      read: "allow",
      write: "allow",
      shell_ls: "allow",
      shell_git_status: "allow",
      shell_rm: "approve",
      other: "approve",
    },
    strict: { read: "approve", write: "approve", shell_ls: "approve", shell_rm: "approve", other: "approve" },
    ask_always: { read: "approve", write: "approve", shell_ls: "approve", shell_rm: "approve", other: "approve" },
  };
  for (const [name, want] of Object.entries(cases)) {
    test(name, () => {
      const e = env({}, name);
      const got: Record<string, string> = {
        read: decide(e, "read_file", filePlan("src/a.ts")).action,
        write: decide(e, "write_file", filePlan("src/a.ts")).action,
        shell_ls: decide(e, "local_shell", shellPlan(["ls", "-la"])).action,
        shell_rm: decide(e, "local_shell", shellPlan(["rm", "-rf", "build"])).action,
        other: decide(e, "process_input", {}).action,
      };
      if (want.shell_git_status) got.shell_git_status = decide(e, "local_shell", shellPlan(["git", "status"])).action;
      assert.deepEqual(got, want);
    });
  }

  test("the read-only commands of default are exactly the issue's list, matched by whole tokens", () => {
    const e = env({}, "default");
    for (const c of [
      "ls",
      "cat a",
      "head -n 3 a",
      "tail a",
      "wc -l a",
      "pwd",
      "git status",
      "git diff HEAD",
      "git log -1",
      "git show HEAD",
    ]) {
      assert.equal(decide(e, "local_shell", shellPlan(c.split(" "))).action, "allow", c);
    }
    for (const c of ["git push", "git statusx", "lsx", "git", "catx a"])
      assert.equal(decide(e, "local_shell", shellPlan(c.split(" "))).action, "approve", c);
  });

  test("every built-in's rules can be listed in order", () => {
    for (const name of Object.keys(BUILTIN_ENVELOPES)) {
      const lines = describeEnvelope(env({}, name), TOOLS);
      assert.match(lines[0], /^1\. always_deny: tool "\*", when_path "\*\*\/\.ssh\/\*\*" \(from quarantine\) → deny$/);
      assert.match(lines[lines.length - 1], /default_action →/);
    }
  });
});

describe("toolMatches: a plain name is compared, a glob compiled once", () => {
  // The patterns a config may write, against every tool name: the answer is picomatch's, as it was
  // when each call compiled each pattern anew.
  const patterns = ["*", "read_file", "read_*", "*_file", "process_{list,kill}", "read_file_rang?", "!(local_shell)"];
  const names = [...TOOLS.map((t) => t.name), "github__create_issue", "read_file.bak"];
  test("same answers as picomatch.isMatch, for every pattern and tool name", () => {
    for (const p of patterns)
      for (const n of names) assert.equal(toolMatches(p, n), picomatch.isMatch(n, p), `${p} against ${n}`);
  });
  test("a name holding no glob character matches only itself", () => {
    assert.ok(toolMatches("process_list", "process_list"));
    assert.ok(!toolMatches("process_list", "read_file"));
    assert.ok(!toolMatches("read_file", "read_file_range"));
  });
});
