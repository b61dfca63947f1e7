// Program identity by canonical path, through the host: a workspace executable named like an
// allowlisted program (`./ls`, or run_tool finding `ls` in the root first) is not that program, so the
// envelope's read-only tier does not allow it and a named catalog entry does not run it.
import assert from "node:assert/strict";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture, programTmp } from "../helpers/fixture.js";
import { shq } from "../helpers/quote.js";

const fx = makeFixture("latch-identity-", programTmp());
after(() => fx.cleanup());
let named: Host;
let any: Host;

before(async () => {
  // A workspace `ls` that would write a file if it ever ran.
  fx.write({ ls: `#!/bin/sh\ntouch ${path.join(fx.root, "pwned")}\n`, "a.txt": "a\n" });
  chmodSync(path.join(fx.root, "ls"), 0o755);
  const cfg = (tools: string) => {
    const p = path.join(fx.base, `agents-${tools === "*" ? "any" : "named"}.toml`);
    writeFileSync(p, `[tools_policies.catalog]\n_tools = "${tools}"\n`);
    return p;
  };
  named = await fx.host({ configPath: cfg("ls,cat"), config: undefined, envelope: "default" });
  any = await fx.host({ configPath: cfg("*"), config: undefined, envelope: "default" });
});

describe("a workspace executable named like an allowlisted program is another program", () => {
  test("`./ls` is not the read-only tier's `ls`: it goes to a person, and runs nothing meanwhile", async () => {
    const real = await named.explain("local_shell", { command: "ls -la" });
    assert.equal(real.decision, "allow", real.reason);
    for (const command of ["./ls", "./ls -la", shq(`${fx.root}/ls`), "env ./ls"]) {
      const ex = await named.explain("local_shell", { command });
      assert.equal(ex.decision, "approve", `${command}: ${ex.reason}`);
      const plan = ex.plan as { programs: { name: string }[] };
      assert.ok(
        plan.programs.some((p) => p.name === path.join(fx.root, "ls")),
        JSON.stringify(plan.programs),
      );
      assert.ok(!plan.programs.some((p) => p.name === "ls"), "never known by the bare name");
      const out = (await named.call("local_shell", { command })) as { status: string };
      assert.equal(out.status, "refused", command); // no approver: denied
    }
    assert.equal(existsSync(path.join(fx.root, "pwned")), false);
  });

  test("run_tool `ls` with a catalog that names `ls` refuses the workspace's `ls`", async () => {
    const out = (await named.call("run_tool", { tool_id: "ls", arguments: [] })) as { status: string; reason?: string };
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.match(out.reason ?? "", /in the workspace, not to .* on the PATH/);
    assert.equal(existsSync(path.join(fx.root, "pwned")), false);
  });

  test('run_tool `ls` with `_tools = "*"`: the plan knows it by its path, and the envelope asks', async () => {
    const ex = await any.explain("run_tool", { tool_id: "ls", arguments: [] });
    assert.equal(ex.decision, "approve", ex.reason);
    const plan = ex.plan as { programs: { name: string; capabilities: { runsWorkspaceCode: boolean } }[] };
    assert.equal(plan.programs[0].name, path.join(fx.root, "ls"));
    assert.equal(plan.programs[0].capabilities.runsWorkspaceCode, true);
    const cat = await any.explain("run_tool", { tool_id: "cat", arguments: ["a.txt"] });
    assert.equal(cat.decision, "allow", cat.reason);
  });
});
