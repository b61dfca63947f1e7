// run_tool with real programs: resolution (root first, then the pinned PATH), the cleared environment,
// closed stdin, and output withheld for each limit (stream cap, time, abnormal end, invalid UTF-8).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { parseSettings } from "../../src/config/settings.js";
import runTool from "../../src/tools/run_tool.js";
import { makeFixture } from "../helpers/fixture.js";
import { callTool, makeToolEnv } from "./tool-env.js";

const fx = makeFixture("latch-runtool-");
after(() => fx.cleanup());
const bin = path.join(fx.base, "bin");
const elsewhere = path.join(fx.base, "elsewhere");
mkdirSync(bin);
mkdirSync(elsewhere);
mkdirSync(path.join(fx.root, "adir"));

function script(dir: string, name: string, body: string, mode = 0o755): void {
  writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(path.join(dir, name), mode);
}
script(fx.root, "hello", 'echo "hi $1"; echo warn >&2');
script(fx.root, "envdump", "env");
script(fx.root, "readstdin", "cat; echo done");
script(fx.root, "loud", "yes | head -c 70000");
script(fx.root, "louderr", "yes | head -c 70000 >&2");
script(fx.root, "slow", "sleep 30");
script(fx.root, "crash", "kill -9 $$");
script(fx.root, "binary", "printf 'a\\377b'");
script(fx.root, "fail", "echo nope; exit 2");
script(fx.root, "shadowed", "echo root", 0o644); // no execute bit: skipped
script(bin, "shadowed", "echo from-path");
script(elsewhere, "prog", "echo outside");
symlinkSync(path.join(elsewhere, "prog"), path.join(fx.root, "escape"));

const PATH_DIRS = [bin, "/usr/bin", "/bin", "relative/bin", path.join(fx.base, "missing")];
const env = (tools = "*", extra: Record<string, string> = {}) =>
  makeToolEnv({
    root: fx.root,
    policies: { catalog: { _tools: tools, ...extra } },
    startupEnv: { PATH: PATH_DIRS.join(":"), SECRET_TOKEN: "s3cret", HOME: "/root" },
    startupPath: PATH_DIRS,
  });

describe("run_tool", () => {
  test("is listed only when [tools_policies.catalog] _tools is set", () => {
    const enabled = (catalog: Record<string, string>) =>
      runTool.enabled!(parseSettings({ toolsPolicies: { catalog }, agents: {} }));
    assert.equal(enabled({}), false);
    assert.equal(enabled({ _tools: "" }), false);
    assert.equal(enabled({ _tools: "ls,git" }), true);
    assert.equal(enabled({ _tools: "*" }), true);
  });

  test("runs a program in the root with argv only; a nonzero exit is a normal result", async () => {
    const out = await callTool(runTool, { tool_id: "hello", arguments: ["a b; rm -rf /"] }, env());
    assert.equal(out.status, "ok");
    const r = out.status === "ok" ? out.result : undefined;
    assert.equal(r.exit_code, 0);
    assert.equal(r.stdout, "hi a b; rm -rf /\n");
    assert.equal(r.stderr, "warn\n");
    const file = path.join(fx.root, "hello");
    assert.deepEqual(r.executable, {
      path: file,
      sha256: createHash("sha256").update(readFileSync(file)).digest("hex"),
      profile: "local-path",
      os_containment: false,
    });
    const fail = await callTool(runTool, { tool_id: "fail", arguments: [] }, env());
    assert.equal(fail.status === "ok" && fail.result.exit_code, 2);
    assert.equal(fail.status === "ok" && fail.result.stdout, "nope\n");
  });

  test("a scoped catalog refuses other programs", async () => {
    const out = await callTool(runTool, { tool_id: "envdump", arguments: [] }, env("hello,ls"));
    assert.equal(out.status, "refused");
    assert.match(out.status === "refused" ? out.reason : "", /not in the catalog/);
  });

  test("the environment is cleared to the pinned PATH and the C locale; stdin is closed", async () => {
    const out = await callTool(runTool, { tool_id: "envdump", arguments: [] }, env());
    assert.equal(out.status, "ok");
    const vars = (out.status === "ok" ? out.result.stdout : "")
      .trim()
      .split("\n")
      .map((l: string) => l.split("=")[0])
      .filter((n: string) => n !== "PWD")
      .sort();
    assert.deepEqual(vars, ["LANG", "LATCH_RUN", "LC_ALL", "PATH"]); // LATCH_RUN marks the run's processes (src/process/procs.ts)
    assert.match(out.status === "ok" ? out.result.stdout : "", new RegExp(`^PATH=${bin}:/usr/bin:/bin$`, "m"));
    const stdin = await callTool(runTool, { tool_id: "readstdin", arguments: [] }, env());
    assert.equal(stdin.status === "ok" && stdin.result.stdout, "done\n");
  });

  test("resolution: root first, a file with no execute bit skipped, then the PATH", async () => {
    const out = await callTool(runTool, { tool_id: "shadowed", arguments: [] }, env());
    assert.equal(out.status === "ok" && out.result.stdout, "from-path\n");
    assert.equal(out.status === "ok" && out.result.executable.path, path.join(bin, "shadowed"));
    const ls = await callTool(runTool, { tool_id: "true", arguments: [] }, env());
    assert.equal(ls.status === "ok" && ls.result.exit_code, 0);
  });

  test("a candidate whose real path is outside the root and the PATH is a hard error; a folder is an error", async () => {
    const out = await callTool(runTool, { tool_id: "escape", arguments: [] }, env());
    assert.equal(out.status, "error");
    assert.match(out.status === "error" ? out.message : "", /outside the root and every PATH folder/);
    const dir = await callTool(runTool, { tool_id: "adir", arguments: [] }, env());
    assert.match(dir.status === "error" ? dir.message : "", /not a regular file/);
    const none = await callTool(runTool, { tool_id: "no-such-tool", arguments: [] }, env());
    assert.equal(none.status === "error" && none.code, "ENOENT");
  });

  test("tool_id is a simple name, and arguments are bounded", async () => {
    for (const id of ["../hello", "/bin/ls", ".", "..", "a b", "x/y", "ä"]) {
      const out = await callTool(runTool, { tool_id: id, arguments: [] }, env());
      assert.equal(out.status, "error", id);
    }
    const many = await callTool(runTool, { tool_id: "hello", arguments: Array(65).fill("a") }, env());
    assert.equal(many.status, "error");
    const big = await callTool(runTool, { tool_id: "hello", arguments: ["x".repeat(4097)] }, env());
    assert.match(big.status === "error" ? big.message : "", /at most 4096 bytes/);
    const nul = await callTool(runTool, { tool_id: "hello", arguments: ["a\0b"] }, env());
    assert.match(nul.status === "error" ? nul.message : "", /free of NUL/);
    const total = await callTool(runTool, { tool_id: "hello", arguments: Array(5).fill("x".repeat(4000)) }, env());
    assert.match(total.status === "error" ? total.message : "", /at most 16384 bytes in all/);
    const extra = await callTool(runTool, { tool_id: "hello", arguments: [], cwd: "/" }, env());
    assert.equal(extra.status, "error");
  });

  test("output is withheld, with a reason, for each limit", async () => {
    const cases: [string, string, RegExp, Record<string, string>?][] = [
      ["loud", "ETOOLARGE", /more than 65536 bytes to stdout/],
      ["louderr", "ETOOLARGE", /more than 65536 bytes to stderr/],
      ["hello", "ETOOLARGE", /more than 3 bytes to stdout/, { _max_stream_bytes: "3" }],
      ["slow", "ETIMEDOUT", /ran past 300 ms/, { _timeout: "300" }],
      ["crash", "ESIGNAL", /ended abnormally \(signal SIGKILL\)/],
      ["binary", "EENCODING", /not valid UTF-8/],
    ];
    for (const [id, code, message, extra] of cases) {
      const out = await callTool(runTool, { tool_id: id, arguments: [] }, env("*", extra));
      assert.equal(out.status, "error", id);
      assert.equal(out.status === "error" && out.code, code, id);
      assert.match(out.status === "error" ? out.message : "", message);
      assert.ok(!JSON.stringify(out).includes("yyy") && !JSON.stringify(out).includes("hi "), `${id}: no output leaks`);
    }
  });
});
