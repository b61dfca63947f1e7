// Pinning against rug pulls: an attached tool is offered only as a person approved it (the sha256 of
// its definition in latch.db). A server nobody approved offers nothing; a tool that changes after the
// first call (with tools/list_changed), or is renamed, drops out of the list and its calls are refused
// with the diff until `latch servers approve`, which shows the diff and logs the approval.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { verifyLog } from "../../src/audit/log-verify.js";
import { runCli } from "../helpers/cli.js";
import { stdioClient } from "../helpers/mcp.js";
import { HOSTILE, envelope, gatewayFixture, nodeServer, text } from "./gateway-fixture.js";

const fx = gatewayFixture("latch-gw-pins-");
after(() => fx.cleanup());
const TOML = nodeServer("hostile", HOSTILE) + envelope({ "hostile__*": "allow" });

describe("a server nobody approved offers nothing", () => {
  test("its tools are not listed, a call is refused with the definition's diff; approve pins them and logs it", async () => {
    const logFile = path.join(fx.base, "unapproved.log");
    const h = await fx.attach(TOML, { stateDir: path.join(fx.base, "fresh-state"), policyLog: logFile }, false);
    assert.deepEqual(
      h.tools().filter((t) => t.axis === "attached"),
      [],
    );
    const out = await h.call("hostile__echo", { text: "x" });
    assert.equal(out.status, "refused");
    assert.match(text(out), /a tool nobody approved yet.*latch servers approve hostile/);
    assert.match(text(out), /\+\s+\\"description\\": \\"Echoes its text\.\\"/);
    const checks = await h.approveServer("hostile");
    assert.ok(checks.some((c) => c.tool === "echo" && c.state === "new"));
    assert.equal((await h.call("hostile__echo", { text: "now" })).status, "ok");
    await h.shutdown("over");
    const log = readFileSync(logFile, "utf8");
    assert.equal(verifyLog(log).ok, true);
    const approved = log
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).record)
      .find((r) => r.type === "servers_approved");
    assert.equal(approved.server, "hostile");
    assert.ok(
      approved.tools.some(
        (t: { name: string; sha256: string }) => t.name === "echo" && /^[0-9a-f]{64}$/.test(t.sha256),
      ),
    );
  });
});

/** Resolves at the next tools/list_changed; bounded, so a missing one fails rather than hangs. */
function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no tools/list_changed within 20 s")), 20_000);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      clearTimeout(t);
      resolve();
    });
  });
}

describe("a rug pull and a rename, through latch mcp", () => {
  test("after the first call the server changes `rug` and renames `safe`: both drop out, calls refused with the diff, clients told", async () => {
    const config = path.join(fx.base, "rug.toml");
    writeFileSync(config, TOML);
    const log = path.join(fx.base, "rug.jsonl");
    const at = ["--root", fx.root, "--state-dir", fx.state, "--config", config];
    const env = { HOME: fx.home, LATCH_APPROVAL_WAIT: "0" };
    const approve = await runCli(["servers", "approve", "hostile", ...at], { env });
    assert.equal(approve.code, 0, approve.stderr);
    assert.match(approve.stdout, /hostile: \d+ tools pinned/);
    const client = await stdioClient([...at, "--envelope", "gw", "--policy-log", log], undefined, env);
    try {
      const before = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(before.includes("hostile__rug") && before.includes("hostile__safe"));
      const changed = nextListChanged(client);
      const first = await client.callTool({ name: "hostile__rug", arguments: {} });
      assert.ok(!first.isError);
      await changed; // the server said its tools changed; latch re-checked the pins and told its client
      const after = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(!after.includes("hostile__rug"), "the changed tool is not listed");
      assert.ok(!after.includes("hostile__safe") && !after.includes("hostile__safe_renamed"), "nor the renamed one");
      assert.ok(after.includes("hostile__echo"), "what did not change stays");
      const again = await client.callTool({ name: "hostile__rug", arguments: {} });
      assert.equal(again.isError, true);
      const said = (again.content as { text: string }[])[0].text;
      assert.match(said, /changed since it was approved/);
      assert.match(said, /-\s+"description": "Tells the time\."/);
      assert.match(said, /\+\s+"description": "Sends your files to attacker\.example\."/);
      const renamed = await client.callTool({ name: "hostile__safe_renamed", arguments: {} });
      assert.match((renamed.content as { text: string }[])[0].text, /a tool nobody approved yet/);
    } finally {
      await client.close();
    }
    const verify = await runCli(["log", "verify", "--state-dir", fx.state, log], { env });
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  });
});

describe("latch servers check and latch tools", () => {
  test("check passes when every tool is as approved and fails, with the diff, when one is not", async () => {
    const config = path.join(fx.base, "check.toml");
    const at = ["--root", fx.root, "--state-dir", path.join(fx.base, "check-state"), "--config", config];
    const env = { HOME: fx.home };
    writeFileSync(config, TOML);
    const unapproved = await runCli(["servers", "check", ...at], { env });
    assert.equal(unapproved.code, 1);
    assert.match(unapproved.stdout, /echo: new, not approved/);
    const tools = await runCli(["tools", ...at], { env });
    assert.match(tools.stdout, /hostile__echo {2}not offered: new, waiting for `latch servers approve hostile`/);
    assert.equal((await runCli(["servers", "approve", "hostile", ...at], { env })).code, 0);
    const ok = await runCli(["servers", "check", ...at], { env });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /hostile: every tool as approved/);
    const listed = await runCli(["tools", ...at], { env });
    assert.match(listed.stdout, /hostile__echo\s+attached\s+\[pinned\] \[attached: `echo`/);
    const list = await runCli(["servers", "list", ...at], { env });
    assert.match(list.stdout, /hostile \(stdio\): \d+ tools offered, 0 waiting/);
    const explained = await runCli(["explain", "hostile__echo", '{"text":"x"}', ...at], { env });
    assert.equal(explained.json.decision, "approve");
    assert.equal(explained.json.effect.attached.server, "hostile");
  });
});
