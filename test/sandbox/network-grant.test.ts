// Network by approval (issue 28, point 2): a contained call has no network; a person grants the names
// a command will reach for one call, and latch's filtering proxy (src/sandbox/proxy/) lets the box
// reach those alone, through the in-box bridge. A loopback HTTP server stands in for a registry; the
// config maps `registry.test` (and `other.test`) to it explicitly (`_network_test_hosts`). Each test
// checks what the server saw, the call's result and the policy log.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import { verifyLog } from "../../src/audit/log-verify.js";
import type { Host } from "../../src/host/create-host.js";
import { makeSandboxFixture, markedProcesses, requireSandbox, type SandboxFixture } from "./sandbox-fixture.js";

interface Out {
  status: string;
  reason?: string;
  result?: Record<string, unknown> & { stdout?: string; stderr?: string; exit_code?: number };
}

/** Answers from a script of yes/no, recording every request. */
function scripted(answers: boolean[]): Approver & { asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = [];
  return {
    name: "scripted",
    asked,
    async request(req) {
      asked.push(req);
      return { approved: answers.shift() ?? false, by: "test script", scope: "once" };
    },
  };
}

/** The outcome and decision records of the host's policy log. */
function logRecords(host: Host): Record<string, unknown>[] {
  if (!existsSync(host.policyLog)) return [];
  return readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record);
}

/** A tiny package a registry serves: packument and tarball. */
function tinyPackage(dir: string, base: string): { packument: string; tarball: Buffer } {
  const pkg = path.join(dir, "package");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "tiny-pkg", version: "1.0.0", main: "index.js" }),
  );
  writeFileSync(path.join(pkg, "index.js"), "module.exports = 'tiny-pkg served by the test registry';\n");
  execFileSync("tar", ["-czf", "tiny.tgz", "package"], { cwd: dir });
  const tarball = readFileSync(path.join(dir, "tiny.tgz"));
  const packument = JSON.stringify({
    name: "tiny-pkg",
    "dist-tags": { latest: "1.0.0" },
    versions: {
      "1.0.0": {
        name: "tiny-pkg",
        version: "1.0.0",
        main: "index.js",
        dist: {
          tarball: `${base}/tiny-pkg/-/tiny-pkg-1.0.0.tgz`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
        },
      },
    },
  });
  return { packument, tarball };
}

let fx: SandboxFixture;
let port: number;
const seen: string[] = [];
let pkg: { packument: string; tarball: Buffer };
const server = http.createServer((req, res) => {
  seen.push(`${req.headers.host} ${req.url}`);
  if (req.url === "/hop") return void res.writeHead(302, { location: "http://other.test/" }).end();
  if (req.url === "/tiny-pkg")
    return void res.writeHead(200, { "content-type": "application/json" }).end(pkg.packument);
  if (req.url === "/tiny-pkg/-/tiny-pkg-1.0.0.tgz")
    return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(pkg.tarball);
  res.end(`registry says hello to ${req.headers.host}\n`);
});

before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-sbx-net-");
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  pkg = tinyPackage(path.join(fx.base, "pkg"), "http://registry.test");
});
after(() => {
  server.close();
  fx?.cleanup();
});

async function host(answers: boolean[], extra: Record<string, string> = {}) {
  const approver = scripted(answers);
  const h = await fx.host({
    approver,
    config: {
      toolsPolicies: {
        local_shell: {
          _network: "ask",
          _network_test_hosts: `registry.test=127.0.0.1:${port}, other.test=127.0.0.1:${port}`,
          ...extra,
        },
      },
      agents: {},
    },
  });
  return { h, approver };
}

const CURL = "curl -sS --max-time 20";

describe("network by approval through latch's proxy", () => {
  test("curl http://registry.test/: refused without a grant, served after a one-call grant, refused on the next call", async () => {
    const { h, approver } = await host([false, true, false]);
    const before = seen.length;
    const told = await h.explain("local_shell", { command: `${CURL} http://registry.test/` });
    assert.equal(told.decision, "approve");
    assert.deepEqual((told.sandbox as Record<string, unknown>).network_wanted, ["registry.test"]);
    assert.ok(told.gates.some((g) => g.origin === "tools_policies.local_shell._network" && g.action === "approve"));
    const no = (await h.call("local_shell", { command: `${CURL} http://registry.test/` })) as Out;
    assert.equal(no.status, "refused", JSON.stringify(no));
    assert.match(approver.asked[0].reason, /network to registry\.test/, "the request names the domain");
    assert.equal(seen.length, before, "nothing reached the registry");

    const yes = (await h.call("local_shell", { command: `${CURL} http://registry.test/` })) as Out;
    assert.equal(yes.status, "ok", JSON.stringify(yes));
    assert.equal(yes.result!.exit_code, 0, String(yes.result!.stderr));
    assert.equal(yes.result!.stdout, "registry says hello to registry.test\n");
    assert.deepEqual(yes.result!.network_domains, {
      granted: ["registry.test"],
      reached: ["registry.test"],
      refused: [],
    });
    assert.equal(seen.length, before + 1);

    const again = (await h.call("local_shell", { command: `${CURL} http://registry.test/` })) as Out;
    assert.equal(again.status, "refused", "a one-call grant does not outlive its call");
    assert.equal(approver.asked.length, 3);
    assert.equal(seen.length, before + 1, "the third call reached nothing");

    // The log: the decision names the domains asked for; the outcome, what was reached.
    const recs = logRecords(h);
    const decided = recs.filter((r) => r.type === "effect_decision" && r.tool === "local_shell");
    assert.equal(decided.length, 3);
    for (const d of decided)
      assert.deepEqual((d.sandbox as Record<string, unknown>).network_wanted, ["registry.test"], JSON.stringify(d));
    const outcomes = recs.filter((r) => r.type === "effect_outcome" && r.network !== undefined);
    assert.deepEqual(
      outcomes.map((o) => o.network),
      [{ granted: ["registry.test"], reached: ["registry.test"], refused: [] }],
    );
    h.close();
    const verified = verifyLog(readFileSync(h.policyLog, "utf8"));
    assert.equal(verified.ok, true, JSON.stringify(verified));
    assert.deepEqual(markedProcesses(), [], "no bridge or program outlives its call");
  });

  test("a grant for registry.test does not reach another name (a redirect, a CONNECT) or a private address", async () => {
    const { h } = await host([true, true, true]);
    const before = seen.length;
    const hop = (await h.call("local_shell", { command: `${CURL} -L http://registry.test/hop` })) as Out;
    assert.equal(hop.status, "ok", JSON.stringify(hop));
    assert.match(String(hop.result!.stdout), /latch: network to other\.test refused: not granted for this call/);
    const report = hop.result!.network_domains as { reached: string[]; refused: { host: string }[] };
    assert.deepEqual(report.reached, ["registry.test"]);
    assert.deepEqual(
      report.refused.map((r) => r.host),
      ["other.test"],
    );
    assert.equal(seen.length, before + 1, "only the granted name's request arrived");

    // CONNECT (what https uses): the granted name is tunnelled, the redirect's other name is not.
    const tunnel = (await h.call("local_shell", { command: `${CURL} -p -L http://registry.test/hop` })) as Out;
    assert.equal(tunnel.status, "ok", JSON.stringify(tunnel));
    assert.notEqual(tunnel.result!.exit_code, 0);
    assert.match(String(tunnel.result!.stderr), /403/, "the tunnel to other.test was refused");
    const t = tunnel.result!.network_domains as { reached: string[]; refused: { host: string }[] };
    assert.deepEqual([t.reached, t.refused.map((r) => r.host)], [["registry.test"], ["other.test"]]);
    assert.equal(seen.length, before + 2);

    // A granted name resolving to a private address (not mapped by the test hook) is refused by url_fetch's rules.
    const local = await host([true, true], { _network_domains: "localhost" });
    const priv = (await local.h.call("local_shell", { command: `${CURL} http://localhost:${port}/` })) as Out;
    assert.equal(priv.status, "ok", JSON.stringify(priv));
    assert.match(String(priv.result!.stdout), /network to localhost refused: 127\.0\.0\.1 is a loopback address/);
    const lit = (await local.h.call("local_shell", { command: `${CURL} http://127.0.0.1:${port}/` })) as Out;
    assert.equal(lit.status, "ok", JSON.stringify(lit));
    assert.match(String(lit.result!.stdout), /network to 127\.0\.0\.1 refused: 127\.0\.0\.1 is a loopback address/);
    assert.equal(seen.length, before + 2, "neither the private name nor the literal reached the server");
  });

  test('a program latch has no table for asks for "network": any public name, still no private address', async () => {
    const { h, approver } = await host([true]);
    const before = seen.length;
    fx.write("fetch.sh", `#!/bin/sh\n${CURL} http://registry.test/\n${CURL} http://127.0.0.1:${port}/\n`, 0o755);
    const out = (await h.call("local_shell", { command: "./fetch.sh" })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(approver.asked[0].reason, /network \("any" public name/);
    assert.match(String(out.result!.stdout), /^registry says hello to registry\.test\n/);
    assert.match(String(out.result!.stdout), /network to 127\.0\.0\.1 refused: 127\.0\.0\.1 is a loopback address/);
    const r = out.result!.network_domains as { granted: unknown; reached: string[] };
    assert.deepEqual([r.granted, r.reached], ["any", ["registry.test"]]);
    assert.equal(seen.length, before + 1, "the loopback literal never reached the server");
  });

  test("npm install of a package served by the test registry succeeds in the box after approval", async () => {
    const { h, approver } = await host([true]);
    fx.write("package.json", JSON.stringify({ name: "ws", version: "0.0.0", private: true }));
    const out = (await h.call("local_shell", {
      command:
        "npm install --registry http://registry.test/ --cache .npm-cache --no-audit --no-fund --ignore-scripts --no-update-notifier tiny-pkg",
      timeout_ms: 120_000,
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.exit_code, 0, String(out.result!.stderr));
    assert.match(approver.asked[0].reason, /network to registry\.test/);
    assert.equal(
      readFileSync(path.join(fx.root, "node_modules/tiny-pkg/index.js"), "utf8"),
      "module.exports = 'tiny-pkg served by the test registry';\n",
    );
    assert.deepEqual((out.result!.network_domains as { reached: string[] }).reached, ["registry.test"]);
    const outcome = logRecords(h).find((r) => r.type === "effect_outcome" && r.network !== undefined);
    assert.deepEqual((outcome!.network as { reached: string[] }).reached, ["registry.test"]);
  });
});
