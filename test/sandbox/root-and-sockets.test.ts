// Two ways out that the mounts alone left: as root (containers, CI; this machine), a contained process
// is uid 0 with no capabilities, and the owner bits of root's own files still let it read them; and a
// filesystem unix socket outside the hidden folders is reached by its path, network or not. Each test
// tries it through the host, then checks the result, the disk or the server, and the policy log.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { rootOnlyPaths } from "../../src/sandbox/root-only.js";
import { unixSocketFilter } from "../../src/sandbox/seccomp.js";
import {
  decisions,
  makeSandboxFixture,
  markedProcesses,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "./sandbox-fixture.js";

const run = promisify(execFile);

type Out = { status: string; result?: Record<string, any> };

let fx: SandboxFixture;
before(async () => {
  await requireSandbox();
  fx = makeSandboxFixture("latch-sbx-root-");
});
after(() => fx?.cleanup());

async function node(js: string, opts: { network?: boolean } = {}): Promise<Out> {
  const host = await fx.host({
    envelope: "auto_edit",
    ...(opts.network ? { config: { toolsPolicies: { local_shell: { _network: "allow" } }, agents: {} } } : {}),
  });
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as Out;
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true);
  assert.equal(decisions(host).at(-1)!.final, "allow");
  return out;
}

const tryIt = (label: string, fn: string) =>
  `try { const r = ${fn}; console.log("${label}: READ " + String(r).length) } catch (e) { console.log("${label}: failed " + e.code) }`;

describe("as root, what only root may read", () => {
  test("this machine runs latch as root (else this describe proves nothing)", () => {
    assert.equal(process.getuid?.(), 0, "run test/sandbox as root (the CI container does) to cover this");
    // Readable here, outside: the test below shows the sandbox is what stops it.
    assert.ok(readFileSync("/etc/shadow").length > 0);
    assert.equal(statSync("/etc/shadow").mode & 0o004, 0, "/etc/shadow is not world-readable");
  });

  test("a contained process cannot read /etc/shadow, /etc/gshadow or /root; the workspace stays writable", async () => {
    const out = await node(
      [
        `const fs = require("fs");`,
        tryIt("shadow", `fs.readFileSync("/etc/shadow")`),
        tryIt("gshadow", `fs.readFileSync("/etc/gshadow")`),
        tryIt("root-home", `fs.readdirSync("/root")`),
        tryIt("passwd", `fs.readFileSync("/etc/passwd")`),
        `fs.writeFileSync("made-as-root.txt", "ok"); console.log("workspace: WRITTEN");`,
      ].join("\n"),
    );
    const stdout = String(out.result!.stdout);
    for (const what of ["shadow", "gshadow", "root-home"])
      assert.match(stdout, new RegExp(`${what}: failed EACCES`), stdout);
    assert.match(stdout, /passwd: READ [1-9]/, "world-readable files stay readable");
    assert.match(stdout, /workspace: WRITTEN/);
    assert.equal(readFileSync(path.join(fx.root, "made-as-root.txt"), "utf8"), "ok");
    assert.deepEqual(markedProcesses(), []);
  });

  test("with HOME=/root (root's own home, covered whole) the call still starts; the home stays unreadable", async () => {
    // The credential stores under HOME are masked before /root is covered: bwrap cannot make mount points inside it.
    const host = await fx.host({ envelope: "auto_edit", env: { PATH: SYSTEM_PATH.join(":"), HOME: "/root" } });
    const out = (await host.call("local_shell", {
      command: "node",
      args: ["-e", tryIt("root-home", `require("fs").readdirSync("/root")`)],
    })) as Out;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.equal(out.result!.exit_code, 0, String(out.result!.stderr));
    assert.match(String(out.result!.stdout), /root-home: failed EACCES/);
  });

  test("the walk finds root's own files and no world-readable one", () => {
    const found = rootOnlyPaths();
    for (const p of ["/etc/shadow", "/etc/gshadow", "/root"])
      assert.ok(found.includes(p), `${p} in ${found.join(", ")}`);
    for (const p of found) assert.notEqual(statSync(p).mode & 0o004, 0o004, `${p} is world-readable`);
  });
});

describe("filesystem unix sockets, network off", () => {
  let dir: string;
  let sock: string;
  let server: net.Server;
  let connections = 0;
  before(async () => {
    // Outside the workspace and not under /tmp (the sandbox's /tmp is its own): visible, read-only.
    dir = mkdtempSync("/var/tmp/latch-sock-");
    sock = path.join(dir, "daemon.sock");
    server = net.createServer((c) => {
      connections++;
      c.end("SERVED\n");
    });
    await new Promise<void>((r) => server.listen(sock, r));
  });
  after(() => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = (p: string) =>
    [
      `const c = require("net").connect(${JSON.stringify(p)});`,
      `c.on("data", (d) => console.log("socket: " + String(d).trim()));`,
      `c.on("error", (e) => console.log("socket: failed " + e.code));`,
    ].join("\n");

  test("the server answers outside (else this proves nothing); contained, connect fails and it sees no one", async () => {
    // Async: the server runs in this process, and a synchronous child would block it.
    const outside = (await run(process.execPath, ["-e", connect(sock)])).stdout;
    assert.match(outside, /socket: SERVED/);
    const seen = connections;
    const out = await node(connect(sock));
    assert.match(String(out.result!.stdout), /socket: failed EPERM/, String(out.result!.stdout));
    assert.equal(connections, seen, "the server got no connection from the sandbox");
    assert.deepEqual(markedProcesses(), []);
  });

  test("socketpair and child processes still work inside (node's own pipes are unix sockets)", async () => {
    const out = await node(
      `console.log("child: " + require("child_process").execFileSync("echo", ["from-child"], { encoding: "utf8" }).trim());`,
    );
    assert.match(String(out.result!.stdout), /child: from-child/, String(out.result!.stderr));
  });

  test("with _network = allow there is no filter: the socket answers", async () => {
    const out = await node(connect(sock), { network: true });
    assert.equal(out.result!.network, true);
    assert.match(String(out.result!.stdout), /socket: SERVED/);
  });

  test("the filter has a table for x64 and arm64 only", () => {
    assert.ok(unixSocketFilter("x64"));
    assert.ok(unixSocketFilter("arm64"));
    assert.equal(unixSocketFilter("ia32"), undefined);
    // 8 bytes per instruction; the last returns KILL_PROCESS for another architecture's calls.
    const f = unixSocketFilter("x64")!;
    assert.equal(f.length % 8, 0);
    assert.equal(f.readUInt32LE(f.length - 4), 0x80000000);
  });
});
