// `latch --version` and `latch --help` answer from the bundle's entry alone (src/cli/main.ts): a
// script that asks for the version pays a bare Node start, not the whole program's load. Shown on a
// copy of the entry with only the chunks it imports statically: nothing else is there to load. Any other
// command loads the program with the build's V8 code cache (src/cli/code-cache.ts), from program.cjs.
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import module from "node:module";
import path from "node:path";
import vm from "node:vm";
import { after, test } from "node:test";
import { buildProgram } from "../../src/cli/program.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { RawStdio } from "../helpers/raw-stdio.js";
import { waitFor } from "../helpers/wait.js";

const DIST_CLI = path.dirname(CLI);
const REPO = path.resolve(DIST_CLI, "../..");
const fx = makeFixture();
after(() => fx.cleanup());

/** main.js and every chunk it imports statically, transitively (the bundle's `from"./chunk-….js"`). */
function staticClosure(): string[] {
  const seen = new Set<string>(["main.js"]);
  const todo = ["main.js"];
  while (todo.length > 0) {
    const text = readFileSync(path.join(DIST_CLI, todo.pop()!), "utf8");
    for (const m of text.matchAll(/(?:from|import)\s*"\.\/([\w-]+\.js)"/g)) {
      if (!seen.has(m[1])) {
        seen.add(m[1]);
        todo.push(m[1]);
      }
    }
  }
  return [...seen];
}

/** A copy of the entry and its static imports, with the package.json the version comes from. */
function entryAlone(): string {
  const base = path.join(fx.base, "entry-alone");
  mkdirSync(path.join(base, "dist/cli"), { recursive: true });
  copyFileSync(path.join(REPO, "package.json"), path.join(base, "package.json"));
  for (const f of staticClosure()) copyFileSync(path.join(DIST_CLI, f), path.join(base, "dist/cli", f));
  return path.join(base, "dist/cli/main.js");
}

test("latch --version and -V answer from the entry alone, without the program's chunks", () => {
  const version = (JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { version: string }).version;
  const main = entryAlone();
  for (const flag of ["--version", "-V"])
    assert.equal(execFileSync(process.execPath, [main, flag], { encoding: "utf8" }), `${version}\n`);
  const bytes = staticClosure().reduce((sum, f) => sum + statSync(path.join(DIST_CLI, f)).size, 0);
  assert.ok(bytes < 16 * 1024, `the entry and its static imports are ${bytes} bytes; the program must stay lazy`);
  // Anything else needs the program, which the copy lacks: the fast path answers nothing more.
  assert.throws(
    () => execFileSync(process.execPath, [main, "tools"], { encoding: "utf8", stdio: "pipe" }),
    /Cannot find module/,
  );
});

test("latch --help into a pipe from the entry alone is commander's own help for the whole program", async () => {
  const main = entryAlone();
  const full = await runCli(["help"]); // the program's help, printed by commander
  assert.equal(full.code, 0, full.stderr);
  assert.match(full.stdout, /^Usage: latch \[options\] \[command\]\n/);
  assert.match(full.stdout, /\n {2}mcp \[options\] +serve latch's tools over MCP/);
  for (const flag of ["--help", "-h"])
    assert.equal(execFileSync(process.execPath, [main, flag], { encoding: "utf8" }), full.stdout);
  // And it is this source's help, not a stale build's.
  const source = buildProgram()
    .configureHelp({ helpWidth: 80 })
    .configureOutput({ getOutHasColors: () => false })
    .helpInformation();
  assert.equal(full.stdout, source);
});

/** The code cache the build made for this Node (src/cli/code-cache.ts names it so). */
const CACHE = `program.cjs.${process.version}-${process.arch}.cache`;

/** A copy of the entry and program.cjs (no chunk of the program), with the cache given, beside the real node_modules. */
function programAlone(name: string, cache: Buffer | undefined): string {
  const base = path.join(fx.base, name);
  mkdirSync(path.join(base, "dist/cli"), { recursive: true });
  copyFileSync(path.join(REPO, "package.json"), path.join(base, "package.json"));
  symlinkSync(path.join(REPO, "node_modules"), path.join(base, "node_modules"));
  for (const f of [...staticClosure(), "program.cjs"])
    copyFileSync(path.join(DIST_CLI, f), path.join(base, "dist/cli", f));
  if (cache) writeFileSync(path.join(base, "dist/cli", CACHE), cache);
  return path.join(base, "dist/cli/main.js");
}

test("the build's code cache for this Node is accepted by V8 for program.cjs", () => {
  // The build runs with the Node the suite runs with (npm test, scripts/node-versions.sh).
  const cache = readFileSync(path.join(DIST_CLI, CACHE));
  const source = readFileSync(path.join(DIST_CLI, "program.cjs"), "utf8");
  const script = new vm.Script(module.wrap(source), {
    filename: path.join(DIST_CLI, "program.cjs"),
    cachedData: cache,
  });
  assert.equal(script.cachedDataRejected, false, "V8 rejected the build's cache: a start compiles the program afresh");
  // The entry reads it as latin1, a byte a character: the same string only while every byte is ASCII.
  const bytes = readFileSync(path.join(DIST_CLI, "program.cjs"));
  assert.equal(
    bytes.findIndex((b) => b > 0x7f),
    -1,
    "program.cjs is ASCII",
  );
  assert.equal(bytes.toString("latin1"), source);
  assert.ok(cache.length > 100_000, `the cache holds ${cache.length} bytes: more than the top level is in it`);
});

test("with the cache the program runs from program.cjs alone; a damaged cache is rejected and compiled from source", async () => {
  const full = await runCli(["tools"]);
  assert.equal(full.code, 0, full.stderr);
  const good = programAlone("program-cached", readFileSync(path.join(DIST_CLI, CACHE)));
  assert.equal(execFileSync(process.execPath, [good, "tools"], { encoding: "utf8" }), full.stdout);
  // A cache from another build or Node, or cut short: V8 refuses it, and the start goes on from the source.
  for (const [name, bytes] of [
    ["program-garbage", Buffer.alloc(64 * 1024, 0x5a)],
    ["program-cut", readFileSync(path.join(DIST_CLI, CACHE)).subarray(0, 4096)],
  ] as const) {
    const main = programAlone(name, bytes);
    assert.equal(execFileSync(process.execPath, [main, "tools"], { encoding: "utf8" }), full.stdout, name);
  }
  // Without a cache for this Node, the entry loads the program's chunks, which this copy lacks.
  const none = programAlone("program-no-cache", undefined);
  assert.throws(
    () => execFileSync(process.execPath, [none, "tools"], { encoding: "utf8", stdio: "pipe" }),
    /Cannot find module/,
  );
});

test("from the cached program.cjs, grep runs rg and its stderr is empty: no import() lost its loader", async () => {
  // Functions that V8 took from the code cache lost import()'s loader: the rg package failed to load
  // and the search fell back to the JS engine without a word (and pg, the shared store, would fail too).
  assert.doesNotMatch(readFileSync(path.join(DIST_CLI, "program.cjs"), "utf8"), /\bimport\("/);
  const main = programAlone("program-rg", readFileSync(path.join(DIST_CLI, CACHE)));
  const root = path.join(fx.base, "rg-root");
  mkdirSync(path.join(root, "a"), { recursive: true });
  writeFileSync(path.join(root, "a/b.ts"), "export {};\n");
  // grep's rg answer stands for a tree unchanged since 2 s before rg started (src/browse/steady-tree.ts).
  await new Promise((r) => setTimeout(r, STEADY_MARGIN_MS + 200));
  const run = spawnSync(
    process.execPath,
    [main, "call", "grep", '{"pattern":"export"}', "--root", root, "--state-dir", path.join(fx.base, "rg-state")],
    // grep loads the rg package (find_files never does: it walks in-process, src/browse/find.ts).
    { encoding: "utf8", env: { ...process.env, LATCH_GREP_ENGINE: "rg" } },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, "");
  const out = run.stdout;
  const answer = JSON.parse(out) as { result: { results: string }; display: { engine: string } };
  assert.equal(answer.result.results, "a/b.ts:1: export {};");
  assert.equal(answer.display.engine, "rg");
});

/** A stand-in bwrap first on PATH: each run appends its arguments to a log, says `said` on stderr and exits `code`. */
function fakeBwrap(name: string, code: number, said: string): { env: Record<string, string>; runs: () => string[] } {
  const dir = path.join(fx.base, name);
  mkdirSync(dir, { recursive: true });
  const log = path.join(dir, "runs.log");
  const script = `#!/bin/sh\necho "$*" >> '${log}'\necho '${said}' >&2\nexit ${code}\n`;
  writeFileSync(path.join(dir, "bwrap"), script, { mode: 0o755 });
  const runs = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
  return { env: { PATH: `${dir}${path.delimiter}${process.env.PATH}` }, runs };
}

/** `latch mcp` started and initialized, then ended by closing stdin: what it said on stderr. */
async function mcpStart(env: Record<string, string>, name: string): Promise<string> {
  const s = new RawStdio(["--root", fx.root, "--state-dir", path.join(fx.base, `${name}-state`)], env);
  await s.init();
  s.child.stdin.end();
  await s.exited;
  return s.stderr;
}

test("the entry starts the sandbox probe before the program loads, once: the host takes its answer", async () => {
  const fake = fakeBwrap("bwrap-ok", 0, "");
  assert.equal((await runCli(["--version"], { env: fake.env })).code, 0);
  assert.deepEqual(fake.runs(), [], "--version starts no probe");
  const at = ["--root", fx.root, "--state-dir", fx.state];
  const explained = await runCli(["explain", ...at, "local_shell", '{"command":"true"}'], { env: fake.env });
  assert.equal(explained.code, 0, explained.stderr);
  assert.match(explained.stdout, /"sandbox":\{"contained":true/);
  // One run: the entry's, which the host adopted (a host that probed again would make two).
  assert.equal(fake.runs().length, 1, fake.runs().join("\n"));
  assert.match(fake.runs()[0], /--unshare-user .*--unshare-net -- \/bin\/sh -c exit 0$/);
  // A host with no tool that starts processes probes nothing, yet its entry started the run: the run is the entry's.
  const hostShape = await runCli(["tools", "--shape", "host", ...at], { env: fake.env });
  assert.equal(hostShape.code, 0, hostShape.stderr);
  assert.equal(fake.runs().length, 2);
});

test("latch mcp over stdio probes once, even for a client that leaves at once: its start-up line names the bwrap", async () => {
  const fake = fakeBwrap("bwrap-ok-stdio", 0, "");
  const said = await mcpStart(fake.env, "probe-ok");
  assert.match(said, /latch mcp: local_shell: contained: true/);
  assert.ok(said.includes(`[bubblewrap (${path.join(fx.base, "bwrap-ok-stdio", "bwrap")})]`), said);
  assert.equal(fake.runs().length, 1, fake.runs().join("\n"));
});

test("latch mcp over stdio answers initialize, tools/list (its skill index a call) and a read while its sandbox probe runs; a shell call waits for it", async () => {
  // A bwrap whose probe run waits for a file the test makes; every other run is the real bwrap's.
  const dir = path.join(fx.base, "bwrap-gated");
  mkdirSync(dir, { recursive: true });
  const gate = path.join(dir, "open");
  const log = path.join(dir, "runs.log");
  const real = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
  const script = [
    "#!/bin/sh",
    `case "$*" in *"-c exit 0") echo probe >> '${log}'; while [ ! -e '${gate}' ]; do sleep 0.05; done;; esac`,
    `exec '${real}' "$@"`,
    "",
  ].join("\n");
  writeFileSync(path.join(dir, "bwrap"), script, { mode: 0o755 });
  const env = { PATH: `${dir}${path.delimiter}${process.env.PATH}` };
  // A skill folder: tools/list's skill index is then a call of the skill tool, which starts no process.
  const root = path.join(fx.base, "gated-root");
  mkdirSync(path.join(root, ".claude/skills/demo"), { recursive: true });
  writeFileSync(
    path.join(root, ".claude/skills/demo/SKILL.md"),
    "---\nname: demo\ndescription: a demo skill\n---\nbody\n",
  );
  writeFileSync(path.join(root, "notes.txt"), "read while bwrap runs\n");
  const s = new RawStdio(["--root", root, "--state-dir", path.join(fx.base, "gated-state"), "--yes"], env);
  try {
    s.write(
      [
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      ].join("\n"),
    );
    // Answered with the probe unable to end: neither waited for it.
    assert.ok((await s.reply(1)).result);
    const tools = (await s.reply(2)).result.tools as { name: string; description: string }[];
    assert.ok(tools.some((t) => t.name === "local_shell"));
    assert.match(tools.find((t) => t.name === "skill")!.description, /demo/, "the skill index is listed");
    void s.call(3, "local_shell", { command: "echo", args: ["boxed"] });
    assert.ok(await waitFor(() => existsSync(log)), "the probe started");
    // A read starts no process: it is answered while the probe still runs.
    const read = await s.call(4, "read_file", { path: "notes.txt" });
    assert.match(JSON.stringify(read.result), /read while bwrap runs/, JSON.stringify(read));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(existsSync(gate), false);
    assert.equal(
      s.replies.some((r) => r.id === 3),
      false,
      "the shell call waits for the probe",
    );
    writeFileSync(gate, "");
    const r = await s.reply(3);
    assert.match(r.result.content[0].text, /boxed/, JSON.stringify(r));
    assert.match(r.result.content[0].text, /contained/, JSON.stringify(r));
    assert.ok(await waitFor(() => /latch mcp: local_shell: contained: true/.test(s.stderr)), s.stderr);
    assert.equal(readFileSync(log, "utf8"), "probe\n", "one probe run");
  } finally {
    writeFileSync(gate, "");
    s.child.stdin.end();
    await s.exited;
  }
});

test("a bwrap that fails the probe: latch mcp reports that failure, and probes no second time", async () => {
  const fake = fakeBwrap("bwrap-fails", 1, "bwrap: No permissions to create new namespace (stand-in)");
  const said = await mcpStart(fake.env, "probe-fails");
  assert.match(
    said,
    // The stand-in's path may hold spaces (a TMPDIR like CI's private pass's): any characters before it.
    /local_shell: contained: false \(.+\/bwrap-fails\/bwrap fails here: bwrap: No permissions to create new namespace \(stand-in\)\)/,
  );
  assert.equal(fake.runs().length, 1, fake.runs().join("\n"));
});
