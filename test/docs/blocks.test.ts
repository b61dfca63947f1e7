// Every code block in README.md and docs/*.md is run or loaded by a test, or says in the docs why not:
// TOML blocks are loaded by `latch config check`, and the shell policy example then runs the programs
// it allows; TypeScript blocks marked runnable run as written (`latch` meaning the package, or the built
// CLI on the PATH); JSON client configs are started by test/cli/readme-configs.test.ts; ```sh blocks by
// runnable.test.ts. A new block without a mark fails here, with the fix.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { transformSync } from "esbuild";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { type Block, docBlocks, latchBin, REPO } from "./blocks.js";

const blocks = docBlocks();
const fx = makeFixture("latch-blocks-");
after(() => fx.cleanup());

/** Pages whose JSON client configs test/cli/readme-configs.test.ts starts. */
const CONFIG_PAGES = ["README.md", "docs/clients.md"];

/** Why a block is not accounted for, or undefined when it is. */
function unaccounted(b: Block): string | undefined {
  if (b.mark === "not run") return b.why ? undefined : "says `not run` without a reason";
  if (b.lang === "text") return undefined; // a diagram or a synopsis, not code
  if (b.lang === "toml") return undefined; // loaded below
  if (b.lang === "json" && CONFIG_PAGES.includes(b.page)) return undefined;
  if ((b.lang === "sh" || b.lang === "ts") && b.mark === "runnable") return undefined;
  return `a \`${b.lang || "(no language)"}\` block that no test runs`;
}

test("every code block in the docs is run or loaded by a test, or says why not", () => {
  assert.ok(blocks.length >= 25, `found only ${blocks.length} blocks`);
  const missing = blocks.flatMap((b) => {
    const why = unaccounted(b);
    return why ? [`${b.page}:${b.line}: ${why}`] : [];
  });
  assert.deepEqual(
    missing,
    [],
    "Put `<!-- runnable -->` on the line before it (sh and ts blocks are then run), or `<!-- not run: why -->`; label diagrams ```text.",
  );
});

const tomls = blocks.filter((b) => b.lang === "toml" && b.mark !== "not run");

for (const b of tomls) {
  test(`${b.page}:${b.line}: the TOML example loads with latch config check`, async () => {
    const file = path.join(fx.base, `example-${b.line}.toml`);
    writeFileSync(file, b.code);
    const r = await runCli(["config", "check", "--config", file], { cwd: fx.root });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /: ok \(sha256/);
  });
}

test("docs/shell.md's shell policy example runs the programs it allows and refuses the ones it denies", async () => {
  const example = tomls.find((b) => b.page === "docs/shell.md" && b.code.includes("_allowed_commands"));
  assert.ok(example, "docs/shell.md has no _allowed_commands example");
  const config = path.join(fx.base, "shell-example.toml");
  writeFileSync(config, example.code);
  const root = path.join(fx.base, "shell-ws");
  mkdirSync(root);
  writeFileSync(path.join(root, "README.md"), "# demo\n");
  execFileSync("git", ["init", "-q", root]);
  const call = (command: string) =>
    runCli([
      "call",
      "--config",
      config,
      "--root",
      root,
      "--state-dir",
      path.join(fx.base, "shell-st"),
      "--yes", // the envelope's questions answered: what is left is the example's own policy
      "local_shell",
      JSON.stringify({ command }),
    ]);
  for (const command of [
    "ls",
    "cat README.md",
    "git status --short",
    "grep -c demo README.md",
    "find . -name README.md",
    "npm --version",
  ]) {
    const r = await call(command);
    assert.equal(r.json?.status, "ok", `${command}: ${r.stdout}${r.stderr}`);
    assert.equal(r.json.result.exit_code, 0, `${command}: ${r.stdout}`);
  }
  const rm = await call("rm README.md");
  assert.equal(rm.json?.status, "refused", rm.stdout);
  assert.match(rm.json.reason, /_denied_commands/);
  assert.equal(execFileSync("cat", [path.join(root, "README.md")], { encoding: "utf8" }), "# demo\n");
});

const scripts = blocks.filter((b) => b.lang === "ts" && b.mark === "runnable");

test("the docs have TypeScript examples that run (this test has something to run)", () => {
  assert.ok(scripts.length >= 3, `found ${scripts.length} runnable ts blocks`);
});

for (const b of scripts) {
  test(`${b.page}:${b.line}: the TypeScript example runs as written`, () => {
    // A project that depends on latch: its node_modules has the package (this repo, built) and the SDKs.
    const dir = path.join(fx.base, `ts-${b.line}-${path.basename(b.page, ".md")}`);
    const modules = path.join(dir, "node_modules");
    mkdirSync(path.join(modules, "@modelcontextprotocol"), { recursive: true });
    symlinkSync(REPO, path.join(modules, "latch"));
    symlinkSync(
      path.join(REPO, "node_modules/@modelcontextprotocol/sdk"),
      path.join(modules, "@modelcontextprotocol/sdk"),
    );
    symlinkSync(path.join(REPO, "node_modules/@agentclientprotocol"), path.join(modules, "@agentclientprotocol"));
    // The agent SDKs the adapters' examples use (latch/ai-sdk …): what such a project installs itself.
    for (const sdk of ["ai", "ai-v5", "langchain"])
      symlinkSync(path.join(REPO, "node_modules", sdk), path.join(modules, sdk));
    mkdirSync(path.join(modules, "@openai"));
    symlinkSync(path.join(REPO, "node_modules/@openai/agents-core"), path.join(modules, "@openai/agents-core"));
    mkdirSync(path.join(modules, "@mastra"));
    symlinkSync(path.join(REPO, "node_modules/@mastra/core"), path.join(modules, "@mastra/core"));
    mkdirSync(path.join(modules, "@langchain"));
    for (const pkg of ["core", "langgraph"])
      symlinkSync(path.join(REPO, "node_modules/@langchain", pkg), path.join(modules, "@langchain", pkg));
    writeFileSync(path.join(dir, "package.json"), '{ "type": "module" }\n');
    const project = path.join(dir, "project");
    mkdirSync(path.join(project, "src"), { recursive: true });
    writeFileSync(path.join(project, "README.md"), "# demo\n");
    writeFileSync(path.join(project, "src/index.ts"), "export const x = 1;\n");
    // The example as written, its types stripped by esbuild (as tsx would), run by plain Node: under
    // tsx's hooks every module the SDKs load went through its thread (library.md's Mastra example took
    // 11 s of wall; each example 1-3 s more than plain).
    const file = path.join(dir, "example.mjs");
    const code = transformSync(b.code.replaceAll("/path/to/project", project), { loader: "ts", format: "esm" }).code;
    writeFileSync(file, code);
    const home = path.join(dir, "home");
    mkdirSync(home);
    try {
      execFileSync(process.execPath, [file], {
        cwd: project,
        env: { PATH: `${latchBin(dir)}:${process.env.PATH ?? ""}`, HOME: home, LANG: "C.UTF-8" },
        stdio: "pipe",
        timeout: 60_000,
      });
    } catch (err) {
      const e = err as { status?: number; stderr?: Buffer };
      assert.fail(`exited ${e.status}: ${e.stderr?.toString() ?? ""}`);
    }
  });
}
