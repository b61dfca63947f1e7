// local_shell end to end with real processes: policies and attacks (checked on disk), cd done by
// latch, cwd, _allowed_dir, the environment filter, stdin, timeouts, and explain through the host.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import localShell from "../../src/tools/local_shell.js";
import { makeFixture } from "../helpers/fixture.js";
import { callTool, makeToolEnv } from "./tool-env.js";

const fx = makeFixture("latch-lshell-");
after(() => fx.cleanup());
fx.write({ "a.txt": "keep me\n", ".env": "TOKEN=1\n", "tools/run.sh": "#!/bin/sh\necho ran in $(pwd)\n" });
chmodSync(path.join(fx.root, "tools/run.sh"), 0o755);
mkdirSync(path.join(fx.root, "sub"));

const shellEnv = (local_shell?: Record<string, string>, extra: Partial<Parameters<typeof makeToolEnv>[0]> = {}) =>
  makeToolEnv({ root: fx.root, policies: local_shell ? { local_shell } : {}, ...extra });
const POLICY = {
  _allowed_commands: "ls,echo,cat,sh,env,find,xargs,pwd,mkdir,true,false,sleep",
  _denied_commands: "rm,dd",
};

function ok(out: Awaited<ReturnType<typeof callTool>>) {
  assert.equal(out.status, "ok", JSON.stringify(out));
  return out.status === "ok" ? out.result : undefined;
}
function refused(out: Awaited<ReturnType<typeof callTool>>, reason: RegExp) {
  assert.equal(out.status, "refused", JSON.stringify(out));
  assert.match(out.status === "refused" ? out.reason : "", reason);
  return out.status === "refused" ? out : undefined;
}

describe("local_shell", () => {
  test("attacks under a policy are refused before anything runs, and the file is untouched", async () => {
    const attacks = [
      "rm a.txt",
      "r''m a.txt",
      '"rm" a.txt',
      "\\rm a.txt",
      "/usr/bin/rm a.txt",
      "env rm a.txt",
      "sh -c 'rm a.txt'",
      "find . -name a.txt -exec rm '{}' ';'",
      "xargs rm a.txt",
      "echo gone > a.txt",
      "ls; rm a.txt",
      "ls\nrm a.txt",
      "ls && $(rm a.txt)",
      "ls `rm a.txt`",
      "ls & rm a.txt",
      "ls | rm a.txt",
      "ls\rrm a.txt",
      "sh -c \"sh -c 'rm a.txt'\"",
    ];
    for (const command of attacks) {
      const out = await callTool(localShell, { command }, shellEnv(POLICY));
      assert.equal(out.status, "refused", command);
    }
    const argsForm = await callTool(localShell, { command: "sh", args: ["-c", "rm a.txt"] }, shellEnv(POLICY));
    refused(argsForm, /denied/);
    assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "keep me\n");
  });

  test("with args, the program runs directly: a glob is a literal argument", async () => {
    const r = ok(await callTool(localShell, { command: "ls", args: ["*.txt"] }, shellEnv(POLICY)));
    assert.notEqual(r.exit_code, 0);
    assert.match(r.stderr, /\*\.txt/);
    assert.deepEqual(r.steps, [{ argv: ["ls", "*.txt"], cwd: fx.root, exit_code: r.exit_code }]);
  });

  test("a policy with only _denied_commands still plans and checks every step", async () => {
    ok(await callTool(localShell, { command: "ls" }, shellEnv({ _denied_commands: "rm" })));
    refused(
      await callTool(localShell, { command: "true && rm a.txt" }, shellEnv({ _denied_commands: "rm" })),
      /denied/,
    );
    refused(
      await callTool(localShell, { command: "ls", shell: true }, shellEnv({ _denied_commands: "rm" })),
      /shell: true` is refused/,
    );
  });

  test("no policy: the interpreter runs what it can, shell: true hands the line to /bin/sh", async () => {
    const out = await callTool(localShell, { command: "echo a | tr a b" }, shellEnv());
    const r = refused(out, /a pipe/);
    assert.match(r?.hint ?? "", /shell: true/);
    const sh = ok(await callTool(localShell, { command: "echo a | tr a b", shell: true }, shellEnv()));
    assert.equal(sh.stdout, "b\n");
    assert.deepEqual(
      sh.steps.map((s: { argv: string[] }) => s.argv),
      [["/bin/sh", "-c", "echo a | tr a b"]],
    );
    refused(await callTool(localShell, { command: "cat .env" }, shellEnv()), /credential path/);
  });

  test("cd is done by latch: it moves the later steps, a bare cd returns to the root", async () => {
    const r = ok(await callTool(localShell, { command: "mkdir -p made; cd made; pwd; cd; pwd" }, shellEnv(POLICY)));
    assert.equal(r.stdout, `${path.join(fx.root, "made")}\n${fx.root}\n`);
    assert.deepEqual(
      r.steps.map((s: { cwd: string }) => s.cwd),
      [fx.root, fx.root, path.join(fx.root, "made"), path.join(fx.root, "made"), fx.root],
    );
    const missing = ok(await callTool(localShell, { command: "cd nowhere; pwd" }, shellEnv(POLICY)));
    assert.deepEqual(
      missing.steps.map((s: { exit_code: number }) => s.exit_code),
      [1, 127],
    ); // pwd does not run elsewhere
    refused(await callTool(localShell, { command: "cd .. && ls" }, shellEnv(POLICY)), /outside the workspace/);
  });

  test("cwd goes through the path resolver", async () => {
    const r = ok(await callTool(localShell, { command: "pwd", cwd: "sub" }, shellEnv(POLICY)));
    assert.equal(r.stdout, `${path.join(fx.root, "sub")}\n`);
    refused(await callTool(localShell, { command: "pwd", cwd: ".." }, shellEnv(POLICY)), /outside the workspace/);
    const file = await callTool(localShell, { command: "pwd", cwd: "a.txt" }, shellEnv(POLICY));
    assert.equal(file.status === "error" && file.code, "ENOTDIR");
  });

  test("_allowed_dir: programs and every cwd stay under it", async () => {
    const pol = { _allowed_dir: "tools" };
    const r = ok(await callTool(localShell, { command: "./run.sh" }, shellEnv(pol)));
    assert.equal(r.stdout, `ran in ${path.join(fx.root, "tools")}\n`);
    refused(await callTool(localShell, { command: "ls" }, shellEnv(pol)), /outside the shell's allowed folder/);
    refused(
      await callTool(localShell, { command: "cd .. && ./tools/run.sh" }, shellEnv(pol)),
      /outside the shell's allowed folder/,
    );
    refused(
      await callTool(localShell, { command: "./run.sh", cwd: "sub" }, shellEnv(pol)),
      /outside the shell's allowed folder/,
    );
  });

  test("the environment passes through minus secrets and latch's own variables; PATH is pinned", async () => {
    const startupEnv = {
      PATH: process.env.PATH,
      GITHUB_TOKEN: "t",
      MY_SECRET: "s",
      DB_PASSWORD: "p",
      OPENAI_API_KEY: "k",
      AWS_REGION: "r",
      SECRET_ACCESS_KEY: "a",
      LATCH_CONFIG: "/x",
      SAFE_VAR: "kept",
    };
    const r = ok(await callTool(localShell, { command: "env" }, shellEnv(POLICY, { startupEnv })));
    const names = r.stdout
      .trim()
      .split("\n")
      .map((l: string) => l.split("=")[0])
      .sort();
    // LATCH_RUN is not passed through: each run sets its own, to find its processes (src/process/procs.ts).
    assert.deepEqual(names, ["LATCH_RUN", "PATH", "SAFE_VAR"]);
    const custom = ok(
      await callTool(localShell, { command: "env" }, shellEnv({ ...POLICY, _env_deny: "SAFE_*" }, { startupEnv })),
    );
    assert.ok(!custom.stdout.includes("SAFE_VAR") && !custom.stdout.includes("LATCH_CONFIG"));
    assert.ok(custom.stdout.includes("GITHUB_TOKEN=t"), "_env_deny replaces the default list");
  });

  test("stdin goes to the first program; xargs arguments from stdin are checked as paths", async () => {
    const r = ok(await callTool(localShell, { command: "cat", stdin: "hello\n" }, shellEnv(POLICY)));
    assert.equal(r.stdout, "hello\n");
    const none = ok(await callTool(localShell, { command: "cat" }, shellEnv(POLICY)));
    assert.equal(none.stdout, "");
    refused(await callTool(localShell, { command: "xargs cat", stdin: ".env\n" }, shellEnv(POLICY)), /credential path/);
    refused(
      await callTool(localShell, { command: "xargs cat", stdin: "/etc/passwd" }, shellEnv(POLICY)),
      /outside the workspace/,
    );
    const big = await callTool(localShell, { command: "cat", stdin: "x".repeat(1024 * 1024 + 1) }, shellEnv(POLICY));
    assert.equal(big.status === "error" && big.code, "ETOOLARGE");
  });

  test("timeouts: _timeout by default, timeout_ms up to _max_timeout; later steps are skipped", async () => {
    const r = ok(
      await callTool(localShell, { command: "sleep 5; echo after" }, shellEnv({ ...POLICY, _timeout: "200" })),
    );
    assert.equal(r.timed_out, true);
    assert.deepEqual(
      r.steps.map((s: { exit_code?: number; skipped?: boolean }) => (s.skipped ? "skipped" : s.exit_code)),
      [143, "skipped"],
    );
    const over = await callTool(
      localShell,
      { command: "ls", timeout_ms: 5000 },
      shellEnv({ ...POLICY, _max_timeout: "1000", _timeout: "500" }),
    );
    assert.equal(over.status, "error");
    assert.match(over.status === "error" ? over.message : "", /Expected `timeout_ms` to be at most 1000/);
  });

  test("explain through the host prints the plan: steps, every command, and the parse", async () => {
    const host = await fx.host({ env: process.env, config: { toolsPolicies: { local_shell: POLICY }, agents: {} } });
    const ex = await host.explain("local_shell", { command: "env ls && sh -c 'cat a.txt'" });
    const plan = ex.plan as {
      steps: { argv: string[]; program: string }[];
      commands: string[][];
      parse: { stmts: unknown[] };
    };
    assert.deepEqual(
      plan.steps.map((s) => s.argv),
      [
        ["env", "ls"],
        ["sh", "-c", "cat a.txt"],
      ],
    );
    assert.ok(plan.steps.every((s) => path.isAbsolute(s.program)));
    assert.deepEqual(plan.commands, [["env", "ls"], ["ls"], ["sh", "-c", "cat a.txt"], ["cat", "a.txt"]]);
    assert.equal(plan.parse.stmts.length, 1);
    const denied = await host.explain("local_shell", { command: "ls | cat" });
    assert.equal(denied.decision, "deny");
    assert.deepEqual(
      denied.gates.map((g) => [g.gate, g.action]),
      [
        ["registry", "allow"],
        ["toolset", "deny"],
      ],
    );
    assert.equal(existsSync(path.join(fx.root, "out")), false);
    assert.ok(!host.tools().some((t) => t.name === "run_tool"), "run_tool is not listed without a catalog");
    const withCatalog = await fx.host({
      env: process.env,
      config: { toolsPolicies: { catalog: { _tools: "ls" } }, agents: {} },
    });
    assert.ok(withCatalog.tools().some((t) => t.name === "run_tool"));
  });
});
