// A folder that holds a workspace secret, named as an argument (issue 13 point 3, issue 14): contained,
// it is fine, because the sandbox masks the secret (`grep -r KEY .` prints no secret); uncontained
// (`_containment = "off"`), nothing masks it, so the argument is refused with a reason that says a
// quarantined file is there (its glob), never its name or contents. Each test checks the output, the
// disk and the policy log.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Approver } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";
import { decisions, requireSandbox, SYSTEM_PATH } from "../sandbox/sandbox-fixture.js";

const SECRET_FILES: Record<string, string> = {
  ".env": "KEY=SECRET-ROOT-ENV-argfolder\n",
  "services/api/.env": "KEY=SECRET-NESTED-ENV-argfolder\n",
  "config/prod key.pem": "KEY SECRET-PEM-argfolder\n",
};
const SECRET_BYTES = ["SECRET-ROOT-ENV-argfolder", "SECRET-NESTED-ENV-argfolder", "SECRET-PEM-argfolder"];

/** Says yes to everything: a refusal seen here is latch's own fixed rule, not a person's no. */
const yes: Approver = { name: "yes", request: async () => ({ approved: true, by: "test" }) };

type Out = { status: string; reason?: string; hint?: string; result?: Record<string, unknown> };

const fx = makeFixture("latch-secret-args-", "/var/tmp");
let contained: Host;
let uncontained: Host;

function hostWith(containment: string, state: string): Promise<Host> {
  return fx.host({
    stateDir: path.join(fx.base, state),
    approver: yes,
    env: { PATH: SYSTEM_PATH.join(":"), HOME: fx.base },
    config: {
      toolsPolicies: {
        local_shell: { _containment: containment },
        catalog: { _containment: containment, _tools: "grep,ls" },
      },
      agents: {},
    },
  });
}

function assertSecretsIntact(): void {
  for (const [rel, content] of Object.entries(SECRET_FILES))
    assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), content, rel);
}

function assertNoSecret(text: string): void {
  for (const s of SECRET_BYTES) assert.ok(!text.includes(s), `${s} leaked: ${text}`);
}

before(async () => {
  await requireSandbox();
  fx.write({ ...SECRET_FILES, "notes.txt": "KEY=public-notes\n", "src/a.ts": "// KEY=public-src\n" });
  contained = await hostWith("auto", "state-contained");
  uncontained = await hostWith("off", "state-uncontained");
});
after(() => fx.cleanup());

describe("a folder argument that holds a workspace secret", () => {
  test("contained: `grep -r KEY .` runs and prints no secret (the sandbox masks it)", async () => {
    for (const command of ["grep -r KEY .", "grep -r KEY services", "grep -r KEY config"]) {
      const out = (await contained.call("local_shell", { command })) as Out;
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.equal(out.result!.contained, true);
      const text = `${String(out.result!.stdout)}\n${String(out.result!.stderr)}`;
      if (command === "grep -r KEY .") assert.match(text, /notes\.txt:KEY=public-notes/, text);
      assertNoSecret(text);
      assert.equal(decisions(contained).at(-1)!.final, "allow");
    }
    assertSecretsIntact();
  });

  test("uncontained: a folder holding a quarantined file is refused, naming its glob, not it", async () => {
    const cases: [string, RegExp][] = [
      ["grep -r KEY .", /\(\*\*\/\.env\)/],
      ["grep -r KEY services", /\(\*\*\/\.env\)/],
      ["ls -la config", /\(\*\*\/\*\.pem\)/],
      ["tar czf x.tgz .", /\(\*\*\/\.env\)/],
      ["cd services && grep -r KEY api", /\(\*\*\/\.env\)/],
    ];
    for (const [command, glob] of cases) {
      const before = decisions(uncontained).length;
      const out = (await uncontained.call("local_shell", { command })) as Out;
      assert.equal(out.status, "refused", `${command}: ${JSON.stringify(out)}`);
      assert.match(out.reason!, /holds a file under the credential quarantine/);
      assert.match(out.reason!, glob);
      assert.match(out.reason!, /uncontained/);
      assert.doesNotMatch(`${out.reason} ${out.hint}`, /prod key|api\/\.env|SECRET/, "the secret is not named");
      const log = decisions(uncontained);
      assert.equal(log.length, before + 1, "the refusal is logged");
      assert.equal(log.at(-1)!.final, "deny");
      assert.equal(log.at(-1)!.reason, out.reason);
    }
    assertSecretsIntact();
    assert.equal(readFileSync(path.join(fx.root, "notes.txt"), "utf8"), "KEY=public-notes\n");
    assert.throws(() => readFileSync(path.join(fx.root, "x.tgz")), /ENOENT/, "tar never ran");
  });

  test("uncontained: run_tool with a folder holding a secret is refused the same way", async () => {
    const out = (await uncontained.call("run_tool", { tool_id: "grep", arguments: ["-r", "KEY", "."] })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.match(out.reason!, /holds a file under the credential quarantine \(\*\*\/\.env\)/);
    assert.equal(decisions(uncontained).at(-1)!.final, "deny");
  });

  test("uncontained: folders and files without a secret under them still run", async () => {
    for (const command of ["grep -r KEY src", "cat notes.txt", "ls src"]) {
      const out = (await uncontained.call("local_shell", { command })) as Out;
      assert.equal(out.status, "ok", `${command}: ${JSON.stringify(out)}`);
      assert.equal(out.result!.contained, false);
      assertNoSecret(`${String(out.result!.stdout)}`);
    }
  });
});
