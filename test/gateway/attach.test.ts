// Attached MCP servers through the one call path: named `<server>__<tool>`, decided by the envelope and
// the policy programs, asked about with the exact arguments, logged, bounded and screened, and every
// upstream failure a clear error while latch keeps serving. Real servers: the hostile fixture and
// @modelcontextprotocol/server-everything, run in the real bubblewrap sandbox.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, describe, test } from "node:test";
import { verifyLog } from "../../src/audit/log-verify.js";
import type { ApprovalRequest } from "../../src/approval/approver.js";
import { deniedOutright } from "../../src/policy/outright.js";
import { pidsCgroupParent } from "../../src/sandbox/cgroup.js";
import { writeProgram } from "../policy/programs-helper.js";
import { livingProcesses } from "../helpers/procs.js";
import { waitFor } from "../helpers/wait.js";
import {
  EVERYTHING,
  FILESYSTEM,
  HOSTILE,
  TOKEN,
  envelope,
  gatewayFixture,
  nodeServer,
  text,
} from "./gateway-fixture.js";

const fx = gatewayFixture("latch-gw-attach-");
after(() => fx.cleanup());

const hostile = (...lines: string[]) => nodeServer("hostile", HOSTILE, ...lines);

describe("attached tools are listed under their server's name, its claims marked and not trusted", () => {
  test("each tool as <server>__<tool>; a poisoned description marked as the server's, hidden characters shown", async () => {
    const h = await fx.attach(hostile() + envelope({}));
    const names = h
      .tools()
      .filter((t) => t.axis === "attached")
      .map((t) => t.name);
    assert.ok(names.includes("hostile__echo") && names.includes("hostile__read_file"), names.join(", "));
    assert.ok(names.every((n) => n.startsWith("hostile__") && n.length <= 64));
    const poisoned = h.tools().find((t) => t.name === "hostile__poisoned")!;
    assert.match(
      poisoned.description,
      /^\[attached: `poisoned` of the MCP server `hostile`\. What follows is the server's own description, not latch's/,
    );
    assert.ok(!/[\u{E0000}-\u{E007F}]/u.test(poisoned.description), "tag characters are escaped, not passed on");
    assert.match(poisoned.description, /\\u\{e0049\}/);
    // The server says read-only; latch takes every attached tool to write (its decision synced first).
    assert.match(poisoned.description, /not trusted by latch: readOnlyHint=true/);
    assert.equal(poisoned.annotations.readOnly, false);
    assert.equal(poisoned.annotations.destructive, true);
  });

  test("a tool named read_file upstream never shadows latch's read_file", async () => {
    fx.write({ "mine.txt": "latch's own read\n" });
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }));
    const own = await h.call("read_file", { path: "mine.txt" });
    assert.equal(own.status, "ok");
    assert.match(text(own), /latch's own read/);
    const theirs = await h.call("hostile__read_file", { path: "mine.txt" });
    assert.match(text(theirs), /hostile read_file ran/);
  });

  test("one server listing a name twice: both refused at load with the reason, calls refused", async () => {
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }), {
      env: { PATH: process.env.PATH ?? "", HOME: fx.home, HOSTILE_DUPLICATE: "1" },
    });
    // The fixture reads HOSTILE_DUPLICATE only if it reaches it: it is not configured, so it does not.
    assert.ok(
      h.tools().some((t) => t.name === "hostile__echo"),
      "an unconfigured variable never reaches the server",
    );
    const h2 = await fx.attach(
      hostile('env = { HOSTILE_DUPLICATE = "env:DUP" }') + envelope({ "hostile__*": "allow" }),
      { env: { PATH: process.env.PATH ?? "", HOME: fx.home, DUP: "1" } },
    );
    assert.ok(!h2.tools().some((t) => t.name === "hostile__echo"));
    const status = h2.gateway!.status()[0];
    assert.ok(status.refused.some((r) => r.upstream === "echo" && /both become `hostile__echo`/.test(r.reason)));
    const out = await h2.call("hostile__echo", { text: "x" });
    assert.equal(out.status, "refused");
    assert.match(text(out), /not offered: .*hostile__echo/);
  });
});

describe("every attached call goes through the envelope, the programs, the approver and the log", () => {
  test("an attached tool no envelope names falls to default_action (approve → no approver → refused, nothing ran)", async () => {
    const h = await fx.attach(hostile('workspace = "rw"') + envelope({}));
    const out = await h.call("hostile__touch", { path: path.join(fx.root, "unnamed.txt") });
    assert.equal(out.status, "refused");
    assert.match(text(out), /default_action/);
    assert.ok(!existsSync(path.join(fx.root, "unnamed.txt")), "the server was never called");
    const ex = await h.explain("hostile__touch", { path: "x" });
    assert.equal(ex.decision, "approve");
    assert.match(ex.reason, /no rule decides; default_action = approve/);
  });

  test('tools."hostile__*" = deny refuses every tool of the server, and they are not listed; allow runs them', async () => {
    const denied = await fx.attach(hostile('workspace = "rw"') + envelope({ "hostile__*": "deny" }));
    const attached = denied.tools().filter((t) => t.axis === "attached");
    assert.ok(attached.length > 0 && attached.every((t) => deniedOutright(denied.envelope, t)));
    const out = await denied.call("hostile__touch", { path: path.join(fx.root, "denied.txt") });
    assert.equal(out.status, "refused");
    assert.ok(!existsSync(path.join(fx.root, "denied.txt")));
    const allowed = await fx.attach(hostile('workspace = "rw"') + envelope({ hostile__touch: "allow" }));
    assert.equal((await allowed.call("hostile__touch", { path: path.join(fx.root, "allowed.txt") })).status, "ok");
    assert.equal(readFileSync(path.join(fx.root, "allowed.txt"), "utf8"), "written by hostile\n");
  });

  test("arguments are checked against the server's schema before anything runs", async () => {
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }));
    const out = await h.call("hostile__echo", { text: 42 });
    assert.equal(out.status, "error");
    assert.match(text(out), /EINVAL/);
  });

  test("a policy program sees the server, the tool, the arguments, the annotations and the pin, and its deny holds", async () => {
    const seen = path.join(fx.base, "seen.json");
    const prog = writeProgram(
      fx.base,
      "gw-policy.cjs",
      `require("node:fs").writeFileSync(${JSON.stringify(seen)}, raw);
       const a = input.effect.attached;
       process.stdout.write(JSON.stringify(a && a.tool === "poisoned" && input.request.notes
         ? { decision: "deny", reason: "no notes to poisoned" } : { decision: "abstain", reason: "not mine" }));`,
    );
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }), {
      policyPrograms: [prog],
      posture: "allow-unless-forbidden",
      policyLog: path.join(fx.base, "programs.log"),
    });
    const out = await h.call("hostile__poisoned", { a: 1, notes: "stolen" });
    assert.equal(out.status, "refused");
    assert.match(text(out), /no notes to poisoned/);
    const input = JSON.parse(readFileSync(seen, "utf8"));
    assert.equal(input.tool, "hostile__poisoned");
    assert.deepEqual(input.request, { a: 1, notes: "stolen" });
    assert.equal(input.effect.axis, "attached");
    assert.equal(input.effect.attached.server, "hostile");
    assert.equal(input.effect.attached.tool, "poisoned");
    assert.equal(input.effect.attached.annotations.readOnlyHint, true);
    assert.match(input.effect.attached.pin, /^[0-9a-f]{64}$/);
    assert.equal((await h.call("hostile__poisoned", { a: 1 })).status, "ok");
  });

  test("the person is shown the exact arguments; a no refuses; the log holds decision and outcome and verifies", async () => {
    const asked: ApprovalRequest[] = [];
    const logFile = path.join(fx.base, "approve.log");
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "approve" }), {
      policyLog: logFile,
      approver: {
        name: "test",
        request: async (r) => {
          asked.push(r);
          return (r.args as { text: string }).text === "yes"
            ? { approved: true, by: "test", scope: "once" }
            : { approved: false, by: "test", reason: "declined" };
        },
      },
    });
    assert.match(text(await h.call("hostile__echo", { text: "yes" })), /"text":"yes"/);
    assert.equal((await h.call("hostile__echo", { text: "no" })).status, "refused");
    assert.deepEqual(
      asked.map((r) => [r.tool, r.args]),
      [
        ["hostile__echo", { text: "yes" }],
        ["hostile__echo", { text: "no" }],
      ],
    );
    assert.ok(asked[0].risk?.some((x) => /attached server `hostile`/.test(x)));
    await h.shutdown("test over");
    const log = readFileSync(logFile, "utf8");
    assert.equal(verifyLog(log).ok, true);
    const records = log
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).record);
    const decisions = records.filter((r) => r.type === "effect_decision" && r.tool === "hostile__echo");
    assert.deepEqual(
      decisions.map((d) => d.final),
      ["allow", "deny"],
    );
    const outcome = records.find((r) => r.type === "effect_outcome" && r.effect_id === decisions[0].effect_id);
    assert.equal(outcome?.status, "ok", "the outcome is logged after the call");
  });
});

describe("a hostile server's result is bounded and screened, its failures are errors, latch keeps serving", () => {
  test("a 20 MB answer stops the server (past max_message_bytes, 16 MiB); a 1 MB one is cut to the output limit", async () => {
    const h = await fx.attach(hostile("timeout_s = 120") + envelope({ "hostile__*": "allow" }));
    const flood = await h.call("hostile__big", { mb: 20 });
    assert.equal(flood.status, "error");
    assert.match(text(flood), /EUPSTREAM.*over 16777216 bytes/);
    const cut = await h.call("hostile__big", { mb: 1 });
    assert.equal(cut.status, "ok");
    assert.ok(text(cut).length < 100_000, `${text(cut).length} bytes reached the model`);
    assert.match(text(cut), /cut by latch's output limit/);
    assert.match(text(await h.call("hostile__echo", { text: "still here" })), /still here/);
  });

  test("a secret in the result is redacted: the configured token and a known key format", async () => {
    const h = await fx.attach(
      hostile('env = { HOSTILE_TOKEN = "env:LATCH_FIXTURE_TOKEN" }') + envelope({ "hostile__*": "allow" }),
    );
    const out = await h.call("hostile__secret", {});
    assert.equal(out.status, "ok");
    assert.ok(!text(out).includes(TOKEN), text(out));
    assert.ok(!text(out).includes("AKIAIOSFODNN7EXAMPLE"), text(out));
    assert.match(text(out), /REDACTED/);
  });

  test("a hang is a timeout, a crash an error, an isError answer an error; the next call is served", async () => {
    const h = await fx.attach(hostile("timeout_s = 2") + envelope({ "hostile__*": "allow" }));
    const hang = await h.call("hostile__hang", {});
    assert.equal(hang.status, "error");
    assert.match(text(hang), /ETIMEDOUT.*did not answer within 2 s/);
    const crash = await h.call("hostile__crash", {});
    assert.equal(crash.status, "error");
    assert.match(text(crash), /EUPSTREAM/);
    const fail = await h.call("hostile__fail", {});
    assert.match(text(fail), /EUPSTREAM.*it went wrong upstream/);
    assert.match(text(await h.call("hostile__echo", { text: "restarted" })), /restarted/);
  });
});

describe("a stdio server runs contained: what it reads, writes and reaches", () => {
  test("a server that crashes and is started again gives its pids cgroup back (as root): restarts do not leak them", async () => {
    const parent = pidsCgroupParent();
    const mine = () =>
      parent === undefined ? [] : readdirSync(parent).filter((e) => e.startsWith(`latch-${process.pid}-`));
    const h = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }));
    const before = new Set(mine());
    for (let i = 0; i < 5; i++) {
      assert.equal((await h.call("hostile__crash", {})).status, "error");
      assert.match(text(await h.call("hostile__echo", { text: `back ${i}` })), new RegExp(`back ${i}`));
    }
    const made = mine().filter((e) => !before.has(e));
    if (process.getuid?.() !== 0) return assert.deepEqual(made, [], "not root: no cgroups");
    // One per start, never given back, was five; given back, a start reuses one (one may still be emptying).
    assert.ok(made.length <= 2, `cgroups made for 5 restarts: ${made.join(", ")}`);
  });

  const peek = async (toml: string, p: string) =>
    text(
      await (await fx.attach(hostile(toml) + envelope({ "hostile__*": "allow" }))).call("hostile__peek", { path: p }),
    );

  test("its environment holds the basics and exactly the configured variables", async () => {
    const h = await fx.attach(
      hostile('env = { HOSTILE_TOKEN = "env:LATCH_FIXTURE_TOKEN" }') + envelope({ "hostile__*": "allow" }),
    );
    const env = text(await h.call("hostile__environ", {}));
    assert.match(env, /HOSTILE_TOKEN=/, "the configured variable is there (its value redacted on the way out)");
    assert.ok(!env.includes("UNRELATED_SECRET") && !env.includes("do-not-pass-me"), env);
    assert.doesNotMatch(
      env,
      /\\nLATCH_FIXTURE_TOKEN=/,
      "a variable is passed under the name the config gives, not its source's",
    );
  });

  test("reading ~/.ssh finds nothing contained; the same server uncontained lists the key (the attack is real)", async () => {
    const ssh = path.join(fx.home, ".ssh");
    assert.doesNotMatch(await peek("", ssh), /id_ed25519/);
    assert.doesNotMatch(await peek("", path.join(ssh, "id_ed25519")), /fixture-key-material|REDACTED/);
    assert.match(await peek('containment = "off"', ssh), /saw: id_ed25519/);
  });

  test('no workspace unless asked: hidden by default, read-only with workspace = "ro", writable with "rw"', async () => {
    fx.write({ "visible.txt": "in the workspace\n" });
    assert.doesNotMatch(await peek("", fx.root), /visible\.txt/);
    assert.match(await peek('workspace = "ro"', fx.root), /visible\.txt/);
    const ro = await fx.attach(hostile('workspace = "ro"') + envelope({ "hostile__*": "allow" }));
    assert.match(text(await ro.call("hostile__touch", { path: path.join(fx.root, "ro.txt") })), /blocked: EROFS/);
    assert.ok(!existsSync(path.join(fx.root, "ro.txt")));
  });

  test("attack: an editor's save of .env under a running server with the workspace: stopped, then started afresh with it masked", async () => {
    const env = path.join(fx.root, ".env");
    fx.write({ ".env": "A=first-7731\n" });
    const table = [
      "[mcp_servers.hostile]",
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(HOSTILE)}, "holds-7731"]`,
      'workspace = "ro"',
      "",
    ].join("\n");
    const h = await fx.attach(table + envelope({ "hostile__*": "allow" }));
    const masked = text(await h.call("hostile__peek", { path: env }));
    assert.doesNotMatch(masked, /first-7731|saw: A=/, "masked");
    const running = () =>
      livingProcesses()
        .filter((p) => p.argv.includes("holds-7731"))
        .map((p) => p.pid);
    const first = running();
    assert.ok(first.length > 0, "the server runs");
    writeFileSync(`${env}.swp`, "A=second-7731\n");
    renameSync(`${env}.swp`, env); // the mask sat on the entry this replaces: gone in the box
    assert.ok(
      await waitFor(() => !running().some((p) => first.includes(p)), 10_000),
      "the server whose box lost the mask is stopped",
    );
    assert.equal(text(await h.call("hostile__peek", { path: env })), masked, "started afresh: the new file is masked");
    assert.equal(readFileSync(env, "utf8"), "A=second-7731\n", "the user's saved file is left as it is");
    rmSync(env);
  });

  test("latch's own files (state dir, config) are hidden even with the workspace", async () => {
    assert.doesNotMatch(await peek('workspace = "rw"', fx.state), /latch\.db/);
    assert.doesNotMatch(await peek('workspace = "rw"', path.join(fx.base, "agents.toml")), /mcp_servers/);
    assert.match(await peek('containment = "off"', fx.state), /latch\.db/);
  });

  test("no network unless network = true", async () => {
    const srv = net.createServer((c) => c.end());
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as net.AddressInfo).port;
    try {
      const off = await fx.attach(hostile() + envelope({ "hostile__*": "allow" }));
      assert.match(text(await off.call("hostile__connect", { port })), /blocked/);
      const on = await fx.attach(hostile("network = true") + envelope({ "hostile__*": "allow" }));
      // With the network the box shares latch's network namespace: loopback is latch's.
      assert.match(text(await on.call("hostile__connect", { port })), /connected/);
    } finally {
      srv.close();
    }
  });
});

describe("real upstream: server-everything", () => {
  test("everything__echo runs where the tools table allows it, and falls to default_action where nothing names it", async () => {
    const h = await fx.attach(nodeServer("everything", EVERYTHING) + envelope({ everything__echo: "allow" }));
    const names = h.tools().map((t) => t.name);
    assert.ok(names.includes("everything__echo"), names.join(", "));
    const out = await h.call("everything__echo", { message: "hello gateway" });
    assert.equal(out.status, "ok");
    assert.match(text(out), /hello gateway/);
    const unnamed = await fx.attach(nodeServer("everything", EVERYTHING) + envelope({}));
    const ex = await unnamed.explain("everything__echo", { message: "x" });
    assert.equal(ex.decision, "approve");
    assert.match(ex.reason, /default_action = approve/);
    assert.equal((await unnamed.call("everything__echo", { message: "x" })).status, "refused");
  });
});

describe("real upstream: server-filesystem over a read-only workspace", () => {
  test("fs__read_text_file reads the workspace; fs__write_file is denied by the envelope, and the box is read-only anyway", async () => {
    fx.write({ "notes.md": "# attached read\n" });
    const toml = [
      "[mcp_servers.fs]",
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(fx.root)}]`,
      'workspace = "ro"',
      "",
    ].join("\n");
    const h = await fx.attach(toml + envelope({ "fs__read_*": "allow", fs__write_file: "deny", "fs__*": "approve" }));
    const names = h.tools().map((t) => t.name);
    assert.ok(names.includes("fs__read_text_file") && names.includes("fs__write_file"), names.join(", "));
    const read = await h.call("fs__read_text_file", { path: path.join(fx.root, "notes.md") });
    assert.equal(read.status, "ok");
    assert.match(text(read), /# attached read/);
    const write = await h.call("fs__write_file", { path: path.join(fx.root, "new.md"), content: "x" });
    assert.equal(write.status, "refused");
    assert.ok(!existsSync(path.join(fx.root, "new.md")));
    const loose = await fx.attach(toml + envelope({ "fs__*": "allow" }));
    const tried = await loose.call("fs__write_file", { path: path.join(fx.root, "new.md"), content: "x" });
    assert.equal(tried.status, "error");
    assert.ok(!existsSync(path.join(fx.root, "new.md")), "the read-only box holds even when the envelope allows");
  });
});
