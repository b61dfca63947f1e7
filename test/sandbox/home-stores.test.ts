// The credential stores of issue 26 (git's stores, gh, Claude's, Vault's), tried for real with the
// workspace at the home folder: a contained process that reaches them without naming them (an
// approved workspace script that reads each) reads nothing,
// because the sandbox masks every path of the one list (fs/quarantine.ts SECRET_PATHS); naming one is
// refused.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeSandboxFixture, markedProcesses, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

const STORES: Record<string, string> = {
  ".git-credentials": "https://me:SECRET-GITCRED-hs@github.com\n",
  ".config/git/credentials": "https://me:SECRET-XDGCRED-hs@github.com\n",
  ".config/gh/hosts.yml": "github.com:\n  oauth_token: SECRET-GH-hs\n",
  ".claude/.credentials.json": '{"token":"SECRET-CLAUDE-hs"}\n',
  ".vault-token": "SECRET-VAULT-hs\n",
};

const SECRET_BYTES = Object.values(STORES).map((v) => v.match(/SECRET-[A-Z]+-hs/)![0]);

function assertNoSecret(text: string): void {
  for (const b of SECRET_BYTES) assert.ok(!text.includes(b), `${b} leaked: ${text}`);
}

type Out = { status: string; reason?: string; result?: Record<string, unknown> };

let fx: SandboxFixture;
let host: Host;

describe("a workspace at the home folder: contained processes read none of its credential stores", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-home-stores-");
    for (const [rel, content] of Object.entries(STORES)) {
      mkdirSync(path.dirname(path.join(fx.home, rel)), { recursive: true });
      writeFileSync(path.join(fx.home, rel), content);
    }
    writeFileSync(path.join(fx.home, "notes.txt"), "SECRET-NOT public-notes\n");
    host = await fx.host({ root: fx.home });
  });
  after(() => fx?.cleanup());

  test("an approved workspace script that reads each store by itself gets nothing", async () => {
    writeFileSync(
      path.join(fx.home, "read.js"),
      `const fs = require("fs");\nfor (const f of ${JSON.stringify(Object.keys(STORES))}) {\n  try { console.log(f, fs.readFileSync(process.env.HOME + "/" + f, "utf8")); } catch (e) { console.log(f, "unreadable", e.code); }\n}\nconsole.log(fs.readFileSync("notes.txt", "utf8"));\n`,
    );
    const out = (await host.call("local_shell", { command: "node read.js" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.contained, true);
    const text = `${String(out.result!.stdout)}\n${String(out.result!.stderr)}`;
    assert.match(text, /public-notes/, "the script ran");
    assertNoSecret(text);
  });

  test("naming each store is refused; the stores are unchanged and no process is left", async () => {
    for (const rel of Object.keys(STORES)) {
      const out = (await host.call("local_shell", { command: `cat ${rel}` })) as Out;
      assert.equal(out.status, "refused", `${rel}: ${JSON.stringify(out)}`);
      assert.match(out.reason ?? "", /credential/);
    }
    for (const [rel, content] of Object.entries(STORES))
      assert.equal(readFileSync(path.join(fx.home, rel), "utf8"), content);
    assert.deepEqual(markedProcesses(), []);
  });
});
