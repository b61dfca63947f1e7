import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { evaluateEnvelope } from "../../src/policy/envelope-eval.js";
import { allDefinitions, parseEnvelopeDef, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { effectOf } from "../../src/policy/effect.js";
import { findTool, TOOLS } from "../../src/registry.js";
import { QUARANTINE_GLOBS } from "../../src/fs/quarantine.js";
import type { Plan } from "../../src/tools/define.js";

const ROOT = "/w/proj";
const HOME = "/home/u";

// An envelope that allows everything it can: the quarantine must still hold.
const open = resolveEnvelope(
  "open",
  allDefinitions({
    open: parseEnvelopeDef(
      {
        default_action: "allow",
        files: { read: "allow", write: "allow" },
        shell: { grant: "allow", prefix_allowlist: ["cat", "cp"] },
        tools: { "*": "allow" },
        always_allow: [{ tool: "*" }],
      },
      ["envelopes", "open"],
    ),
  }),
);

const file = (abs: string): Plan => ({
  paths: [{ input: abs, abs, rel: abs.startsWith(ROOT + "/") ? abs.slice(ROOT.length + 1) : abs, exists: true }],
});
const sh = (argv: string[], cwd = ROOT): Plan => ({ steps: [{ argv, cwd }], commands: [argv] });
const effect = (tool: string, plan: Plan) => effectOf(findTool(tool)!, plan, { root: ROOT, home: HOME });
const decide = (tool: string, plan: Plan) => evaluateEnvelope(open, { tool, effect: effect(tool, plan), root: ROOT });

describe("credential quarantine", () => {
  const quarantined = [
    `${HOME}/.ssh/id_ed25519`,
    `${HOME}/.ssh`,
    `${ROOT}/.aws/credentials`,
    `${ROOT}/x/.gnupg/pubring.kbx`,
    `${HOME}/.kube/config`,
    `${HOME}/.docker/config.json`,
    `${ROOT}/.env`,
    `${ROOT}/app/.env.production`,
    `${ROOT}/certs/server.pem`,
    `${ROOT}/tls.key`,
    `${ROOT}/keys/id_rsa.pub`,
    `${ROOT}/id_ed25519_work`,
    `${HOME}/.netrc`,
    `${ROOT}/.npmrc`,
    `${ROOT}/.pypirc`,
    // A newline in a name or a folder name is a character like any other: it must not slip past a glob.
    `${HOME}/.ssh/id\nrsa`,
    `${ROOT}/a\nb/.aws/credentials`,
    `${ROOT}/.env.\n`,
  ];
  for (const p of quarantined) {
    test(`${p} is denied to every tool, even under an envelope that allows everything`, () => {
      for (const { name: tool } of TOOLS) {
        const d = decide(tool, file(p));
        assert.equal(d.action, "deny", `${tool} ${p}`);
        assert.match(d.reason, /credential quarantine/);
      }
    });
  }

  test(".env.example and ordinary files stay open", () => {
    assert.equal(decide("read_file", file(`${ROOT}/.env.example`)).action, "allow");
    assert.equal(decide("read_file", file(`${ROOT}/src/env.ts`)).action, "allow");
    assert.equal(decide("read_file", file(`${ROOT}/.environment/x`)).action, "allow");
  });

  test("shell arguments naming quarantined paths are covered: absolute, relative, ~, --opt=value, inner commands", () => {
    for (const argv of [
      ["cat", "/home/u/.ssh/id_rsa"],
      ["cat", "~/.aws/credentials"],
      ["cat", ".env"],
      ["cp", "--from=certs/a.pem", "/tmp/x"],
    ]) {
      assert.equal(decide("local_shell", sh(argv)).action, "deny", argv.join(" "));
    }
    assert.equal(decide("local_shell", sh(["cat", "../.ssh/config"], `${HOME}/proj`)).action, "deny");
    const inner: Plan = {
      steps: [{ argv: ["xargs", "cat"], cwd: ROOT }],
      commands: [
        ["xargs", "cat"],
        ["cat", "/home/u/.netrc"],
      ],
    };
    assert.equal(decide("run_tool", inner).action, "deny");
    assert.equal(decide("local_shell", { raw: "cat $HOME/x ~/.ssh/id_rsa" }).action, "deny");
    assert.equal(decide("local_shell", sh(["cat", "README.md"])).action, "allow");
  });

  test("no user envelope can drop the quarantine: it is not in the definition, only added on resolve", () => {
    const kid = resolveEnvelope(
      "k",
      allDefinitions({ k: parseEnvelopeDef({ extends: "auto_edit", always_deny: [] }, ["envelopes", "k"]) }),
    );
    assert.equal(kid.always_deny.filter((r) => r.from === "quarantine").length, QUARANTINE_GLOBS.length);
    assert.equal(
      evaluateEnvelope(kid, { tool: "read_file", effect: effect("read_file", file(`${ROOT}/.npmrc`)), root: ROOT })
        .action,
      "deny",
    );
  });
});
