// Fewer questions when contained, more when not: under auto_edit with the sandbox, `npm test` of a
// small project runs without a question in workspace-write mode, and what its test tries (write outside
// the workspace, write .git/hooks, read ~/.ssh, connect out) fails inside the sandbox. With
// `_containment = "off"` the same attack classes go to approval; `required` without a sandbox (a PATH
// without bwrap) refuses with the fix. Approval requests, the policy log and `latch explain` name the risk.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import type { Host, HostOptions } from "../../src/host/create-host.js";
import { localShell } from "../../src/config/toolsets.js";
import { parseConfig } from "../../src/config/load.js";
import {
  decisions,
  initRepo,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SECRETS,
  type SandboxFixture,
} from "./sandbox-fixture.js";
import { shq } from "../helpers/quote.js";

type Out = { status: string; reason?: string; hint?: string; gate?: string; result?: Record<string, unknown> };

/** An approver that records what it was asked and says no. */
function recorder(): Approver & { asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = [];
  return {
    name: "recorder",
    asked,
    async request(req) {
      asked.push(req);
      return { approved: false, by: "test recorder" };
    },
  };
}

let fx: SandboxFixture;
let port: number;
let connections = 0;
const server = net.createServer((s) => {
  connections++;
  s.end();
});

function projectTest(fx: SandboxFixture): string {
  const tryIt = (label: string, fn: string) =>
    `try { ${fn}; console.log("${label}: DONE") } catch (e) { console.log("${label}: failed", e.code) }`;
  return [
    `const fs = require("fs");`,
    tryIt("write-workspace", `fs.writeFileSync("coverage.txt", "ok")`),
    tryIt("write-outside", `fs.writeFileSync(${JSON.stringify(path.join(fx.outside, "x"))}, "x")`),
    tryIt("write-hooks", `fs.writeFileSync(".git/hooks/pre-push", "#!/bin/sh\\n")`),
    tryIt("read-ssh", `console.log(fs.readFileSync(${JSON.stringify(path.join(fx.home, ".ssh/id_rsa"))}, "utf8"))`),
    `const s = require("net").connect(${port}, "127.0.0.1");`,
    `s.on("connect", () => { console.log("connect: DONE"); s.end(); });`,
    `s.on("error", (e) => console.log("connect: failed", e.code));`,
    "",
  ].join("\n");
}

describe("containment tiers", () => {
  before(async () => {
    await requireSandbox();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as net.AddressInfo).port;
    fx = makeSandboxFixture("latch-sbx-tiers-");
    fx.write("package.json", JSON.stringify({ name: "p", version: "1.0.0", scripts: { test: "node test.js" } }));
    fx.write("test.js", projectTest(fx));
    initRepo(fx);
  });
  after(() => {
    server.close();
    fx?.cleanup();
  });

  /** Runs test.js through `run`, unasked, contained with a writable workspace: only its workspace write lands. */
  async function escapesFail(run: (host: Host) => Promise<unknown>, config?: HostOptions["config"]) {
    rmSync(path.join(fx.root, "coverage.txt"), { force: true });
    const approver = recorder();
    const host = await fx.host({ approver, config });
    const out = (await run(host)) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(approver.asked.length, 0, "no question was asked");
    assert.equal(out.result!.contained, true);
    assert.equal(out.result!.mode, "workspace-write");
    const stdout = String(out.result!.stdout);
    assert.match(stdout, /write-workspace: DONE/);
    for (const what of ["write-outside", "write-hooks", "read-ssh", "connect"])
      assert.match(stdout, new RegExp(`${what}: failed`), stdout);
    assert.ok(!stdout.includes(SECRETS.ssh));
    assert.equal(readFileSync(path.join(fx.root, "coverage.txt"), "utf8"), "ok");
    assert.equal(existsSync(path.join(fx.outside, "x")), false);
    assert.equal(existsSync(path.join(fx.root, ".git/hooks/pre-push")), false);
    assert.equal(connections, 0);
    assert.deepEqual(markedProcesses(), []);
    const d = decisions(host).at(-1)!;
    assert.equal(d.final, "allow");
    assert.deepEqual(d.sandbox, { contained: true, mode: "workspace-write", network: false });
    return d;
  }

  test("auto_edit: `npm test` runs without a question, workspace-write; its escapes fail inside the sandbox", async () => {
    const d = await escapesFail((host) => host.call("local_shell", { command: "npm test" }));
    assert.match(String(d.reason), /contained_allowlist/);
  });

  test("run_tool: the catalog's program runs in the same sandbox, and its escapes fail there", async () => {
    await escapesFail((host) => host.call("run_tool", { tool_id: "node", arguments: ["test.js"] }), {
      toolsPolicies: { catalog: { _tools: "node" } },
      agents: {},
    });
  });

  test("default: `npm test` runs without a question but read-only; a line leaving the root asks", async () => {
    const approver = recorder();
    const host = await fx.host({
      envelope: "default",
      approver,
      config: { toolsPolicies: { local_shell: { _allowed_paths: fx.outside } }, agents: {} },
    });
    const out = (await host.call("local_shell", { command: "npm test" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(approver.asked.length, 0);
    assert.equal(out.result!.mode, "read-only");
    assert.match(String(out.result!.stdout), /write-workspace: failed EROFS/);
    // a path outside the root (allowed to arguments by _allowed_paths) leaves the box: it asks
    const away = (await host.call("local_shell", { command: `node ${shq(path.join(fx.outside, "x.js"))}` })) as Out;
    assert.equal(away.status, "refused");
    assert.equal(approver.asked.length, 1, "a path outside the root asks");
    assert.match(approver.asked[0].reason, /if approved: runs contained \(workspace-write\).*no network/);
  });

  test("explain says contained and the mode", async () => {
    const host = await fx.host();
    const ro = await host.explain("local_shell", { command: "git status" });
    assert.deepEqual(ro.sandbox, { contained: true, mode: "read-only", network: false });
    const rw = await host.explain("local_shell", { command: "npm test" });
    assert.deepEqual(rw.sandbox, { contained: true, mode: "workspace-write", network: false });
  });

  test('_containment = "off": the attack classes go to approval; only the uncontained tier runs, and says so', async () => {
    const approver = recorder();
    const host = await fx.host({
      approver,
      config: { toolsPolicies: { local_shell: { _containment: "off" } }, agents: {} },
    });
    const before = readFileSync(path.join(fx.root, "a.txt"), "utf8");
    for (const command of ["git status", "git diff", "git log --output=a.txt", "npm test"]) {
      const out = (await host.call("local_shell", { command })) as Out;
      assert.equal(out.status, "refused", `${command}: ${JSON.stringify(out)}`);
      assert.equal(out.gate, "approval");
    }
    assert.equal(approver.asked.length, 4);
    for (const r of approver.asked) assert.match(r.reason, /runs uncontained, with the user's full rights/);
    assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), before);
    const cat = (await host.call("local_shell", { command: "cat a.txt" })) as Out;
    assert.equal(cat.status, "ok", JSON.stringify(cat));
    assert.equal(cat.result!.contained, false);
    assert.match(String(cat.result!.uncontained_reason), /_containment = off/);
    const d = decisions(host).at(-1)!;
    assert.deepEqual(d.sandbox, { contained: false, network: true });
    assert.match(String(d.reason), /uncontained_allowlist/);
  });

  test("`required` with no bwrap on PATH refuses every shell and run_tool call with the fix; `auto` runs uncontained", async () => {
    const bin = path.join(fx.base, "nobwrap-bin");
    mkdirSync(bin, { recursive: true });
    for (const p of ["git", "ls", "cat", "node"])
      if (!existsSync(path.join(bin, p))) symlinkSync(`/usr/bin/${p}`, path.join(bin, p));
    const env = { PATH: bin, HOME: fx.home };
    const required = await fx.host({
      env,
      config: {
        toolsPolicies: {
          local_shell: { _containment: "required" },
          catalog: { _tools: "ls", _containment: "required" },
        },
        agents: {},
      },
    });
    for (const [tool, args] of [
      ["local_shell", { command: "ls" }],
      ["run_tool", { tool_id: "ls", arguments: [] }],
    ] as const) {
      const out = (await required.call(tool, args)) as Out;
      assert.equal(out.status, "refused", JSON.stringify(out));
      assert.match(String(out.reason), /_containment = "required".*bwrap.*not on latch's PATH/);
      assert.match(String(out.hint), /apt-get install bubblewrap/);
    }
    const auto = await fx.host({ env, approver: recorder() });
    const ls = (await auto.call("local_shell", { command: "ls" })) as Out;
    assert.equal(ls.status, "ok", JSON.stringify(ls));
    assert.equal(ls.result!.contained, false);
    assert.match(String(ls.result!.uncontained_reason), /no sandbox works here/);
    const st = (await auto.call("local_shell", { command: "git status" })) as Out;
    assert.equal(st.gate, "approval", "uncontained, git is no longer on the read-only tier");
  });

  test("bad _containment and _network values stop start-up with the accepted ones", () => {
    assert.throws(
      () => parseConfig('[tools_policies.local_shell]\n_containment = "yes"\n', "a.toml"),
      /a\.toml:2: `tools_policies\.local_shell\._containment`: .*"auto", "required" or "off", got `yes`/,
    );
    assert.throws(
      () => parseConfig('[tools_policies.catalog]\n_network = "on"\n', "a.toml"),
      /a\.toml:2: `tools_policies\.catalog\._network`: .*"deny" or "allow", got `on`/,
    );
    assert.deepEqual({ c: localShell.parse({}).containment, n: localShell.parse({}).network }, { c: "auto", n: false });
  });
});
