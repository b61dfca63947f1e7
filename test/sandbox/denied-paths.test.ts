// The user's own always_deny paths, tried in the box: `always_deny tool="*" when_path="**/private/**"`
// refuses `cat private/p.txt`, but a contained `grep -r hidden .` read it anyway (the sandbox masked
// only the built-in quarantine). Now every path the envelope closes to the calling tool (always_deny,
// files.read.deny_paths: the walks' rule, src/policy/visibility.ts) is masked like a secret. Each
// test checks the output, the disk (nothing changed, no mount point left) and the process table.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeSandboxFixture, markedProcesses, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

type Out = { status: string; reason?: string; result?: Record<string, unknown> };

const PRIVATE = {
  "private/p.txt": "hidden PRIVATE-BYTES-dp28\n",
  "a/b/private/deep.txt": "hidden PRIVATE-DEEP-dp28\n",
  "notes/denied.log": "hidden DENIED-PATHS-dp28\n",
};
const NEEDLES = ["PRIVATE-BYTES-dp28", "PRIVATE-DEEP-dp28", "DENIED-PATHS-dp28"];

let fx: SandboxFixture;
let host: Host;

function text(out: Out): string {
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  return `${String(out.result!.stdout)}\n${String(out.result!.stderr)}`;
}

describe("the envelope's denied paths are masked in the box", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-denied-");
    for (const [rel, content] of Object.entries(PRIVATE)) fx.write(rel, content);
    fx.write("public.txt", "hidden public-dp28\n");
    fx.write("a/b/visible.txt", "hidden visible-dp28\n");
    host = await fx.host({
      envelope: "mine",
      config: {
        toolsPolicies: {
          local_shell: { _containment: "required" },
          catalog: { _tools: "node", _containment: "required" },
        },
        agents: {},
        envelopes: {
          mine: {
            extends: "auto_edit",
            always_deny: [{ tool: "*", when_path: "**/private/**" }],
            files: { read: { grant: "allow", deny_paths: ["**/notes/denied.log"] } },
          },
        },
      },
    });
  });
  after(() => fx?.cleanup());

  test("`cat private/p.txt` is refused by the envelope (the rule works at the gate)", async () => {
    const out = (await host.call("local_shell", { command: "cat private/p.txt" })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
  });

  test("contained `grep -r hidden .` prints the public files and not a byte of the denied ones", async () => {
    const out = text((await host.call("local_shell", { command: "grep -r hidden ." })) as Out);
    assert.match(out, /public-dp28/);
    assert.match(out, /visible-dp28/);
    for (const n of NEEDLES) assert.ok(!out.includes(n), `${n} leaked:\n${out}`);
  });

  test("a script that walks the tree reads nothing under them either (node, no path named)", async () => {
    const walk = [
      "const fs=require('fs'),p=require('path');",
      "const w=(d)=>{for(const e of fs.readdirSync(d,{withFileTypes:true})){const f=p.join(d,e.name);",
      "if(e.isDirectory()){if(e.name!=='.git')w(f)}else{try{process.stdout.write(f+':'+fs.readFileSync(f,'utf8'))}catch(x){console.log(f,x.code)}}}};w('.')",
    ].join("");
    const out = text((await host.call("run_tool", { tool_id: "node", arguments: ["-e", walk] })) as Out);
    assert.match(out, /public-dp28/);
    for (const n of NEEDLES) assert.ok(!out.includes(n), `${n} leaked:\n${out}`);
  });

  test("the disk is unchanged and nothing is left running", () => {
    for (const [rel, content] of Object.entries(PRIVATE))
      assert.equal(readFileSync(path.join(fx.root, rel), "utf8"), content, rel);
    assert.deepEqual(readdirSync(path.join(fx.root, "private")), ["p.txt"]);
    assert.deepEqual(markedProcesses(), []);
  });
});
