// `latch --version` and `latch --help` answer from the bundle's entry alone (src/cli/main.ts): a
// script that asks for the version pays a bare Node start, not the whole program's load. Shown on a
// copy of the entry with only the chunks it imports statically: nothing else is there to load.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { buildProgram } from "../../src/cli/program.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";

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
