import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { applyPatch } from "diff";
import { startBudget } from "../../src/ast/budget.js";
import { searchTree } from "../../src/ast/search.js";
import { resolvePath } from "../../src/fs/paths.js";
import { makeFixture } from "../helpers/fixture.js";
import { expectError, expectOk } from "../helpers/expect.js";

const fx = makeFixture("latch-ast-search-");
after(() => fx.cleanup());
const config = (localFs: Record<string, string> = {}, ast: Record<string, string> = {}) => ({
  toolsPolicies: { local_fs: localFs, ast },
  agents: {},
});

async function run(tool: string, args: Record<string, unknown>, cfg = config()) {
  const host = await fx.host({ config: cfg });
  return host.call(tool, args);
}
async function runOk(tool: string, args: Record<string, unknown>, cfg = config()) {
  const out = await run(tool, args, cfg);
  return expectOk(out).result;
}

/** Every file under the workspace with its bytes and mtime, to prove nothing was written. */
function snapshotTree(dir = fx.root, rel = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, d.name);
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) for (const [k, v] of snapshotTree(abs, r)) out.set(k, v);
    else if (d.isFile()) out.set(r, `${statSync(abs).mtimeMs}:${readFileSync(abs, "base64")}`);
  }
  return out;
}

describe("ast_search", () => {
  test("metavariables: $A and $$$ARGS are captured, each match is path:N: text", async () => {
    fx.write({
      "s1/app.ts":
        "import { log } from './log';\nconsole.log(user.name);\nconsole.log(\"a\", 1,\n  2);\nif (x) {\n  console.log(x);\n}\n",
      "s1/lib/util.js": "function f(a, b) { return console.log(a + b); }\n",
    });
    const one = await runOk("ast_search", { pattern: "console.log($A)", path: "s1" });
    assert.deepEqual(one.matches, [
      { match: "s1/app.ts:2: console.log(user.name)", vars: { A: "user.name" } },
      { match: "s1/app.ts:6: console.log(x)", vars: { A: "x" } },
      { match: "s1/lib/util.js:1: console.log(a + b)", vars: { A: "a + b" } },
    ]);
    const many = await runOk("ast_search", { pattern: "console.log($$$ARGS)", path: "s1", lang: "typescript" });
    assert.deepEqual(
      many.matches.map((m: any) => [m.match, m.vars.ARGS]),
      [
        ["s1/app.ts:2: console.log(user.name)", "user.name"],
        ['s1/app.ts:3: console.log("a", 1, …', '"a", 1,\n  2'],
        ["s1/app.ts:6: console.log(x)", "x"],
      ],
    );
    const fn = await runOk("ast_search", { pattern: "function $F($$$P) { $$$B }", path: "s1/lib/util.js" });
    assert.deepEqual(fn.matches[0].vars, { F: "f", P: "a, b", B: "return console.log(a + b);" });
    const py = await runOk("ast_search", { pattern: "print($A)", path: "s1" });
    assert.equal(py.count, 0);
  });

  test("structure, not text: formatting and comments do not matter, strings that look alike do not match", async () => {
    fx.write({ "s2/a.ts": "foo(  1,\n   /* two */ 2 );\nconst s = 'foo(1, 2)';\nfoo(1, 3);\n" });
    const r = await runOk("ast_search", { pattern: "foo(1, 2)", path: "s2" });
    assert.deepEqual(
      r.matches.map((m: any) => m.match),
      ["s2/a.ts:1: foo(  1, …"],
    );
  });

  test("gitignore-aware and within the path rules: ignored, node_modules, denied, linked-out and control-plane files are not searched", async () => {
    fx.write({
      "s3/.gitignore": "gen/\n*.gen.ts\n",
      "s3/src/keep.ts": "secret();\n",
      "s3/src/skip.gen.ts": "secret();\n",
      "s3/gen/out.ts": "secret();\n",
      "s3/node_modules/pkg/index.js": "secret();\n",
      "s3/private/key.ts": "secret();\n",
      "s3/state/planted.ts": "secret();\n",
    });
    mkdirSync(path.join(fx.base, "outside"), { recursive: true });
    writeFileSync(path.join(fx.base, "outside", "o.ts"), "secret();\n");
    symlinkSync(path.join(fx.base, "outside"), path.join(fx.root, "s3", "linked"));
    symlinkSync(path.join(fx.base, "outside", "o.ts"), path.join(fx.root, "s3", "src", "link.ts"));
    const host = await fx.host({
      config: config({ _denied_path_substrings: "private/" }),
      stateDir: path.join(fx.root, "s3", "state"),
    });
    const out = await host.call("ast_search", { pattern: "secret()", path: "s3" });
    const r = expectOk(out).result;
    assert.deepEqual(
      r.matches.map((m: any) => m.match),
      ["s3/src/keep.ts:1: secret()"],
    );
    const denied = await host.call("ast_search", { pattern: "secret()", path: "s3/private" });
    assert.equal(denied.status, "refused");
    const outside = await host.call("ast_search", { pattern: "secret()", path: "../outside" });
    assert.equal(outside.status, "refused");
  });

  test("files over _max_read_bytes and binary files are skipped, and the note counts them", async () => {
    fx.write({
      "s7/small.ts": "needle();\n",
      "s7/big.ts": "needle();\n" + "// padding\n".repeat(400),
      "s7/bin.ts": Buffer.concat([Buffer.from("needle();\n"), Buffer.alloc(16)]),
    });
    const r = await runOk("ast_search", { pattern: "needle()", path: "s7" }, config({ _max_read_bytes: "1024" }));
    assert.deepEqual(
      r.matches.map((m: any) => m.match),
      ["s7/small.ts:1: needle()"],
    );
    assert.match(
      r.note,
      /Skipped files: (1 too large, 1 binary|1 binary, 1 too large) \(too large means over _max_read_bytes\)/,
    );
  });

  test("capped in path order, with a note", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`s4/f${String(i).padStart(2, "0")}.ts`] = `hit(${i});\nhit(${i + 100});\n`;
    fx.write(files);
    for (let round = 0; round < 3; round++) {
      const r = await runOk("ast_search", { pattern: "hit($N)", path: "s4" }, config({ _max_grep_matches: "5" }));
      assert.deepEqual(
        r.matches.map((m: any) => m.vars.N),
        ["0", "100", "1", "101", "2"],
      );
      assert.match(r.note, /Showing the first 5 matches in path order \(_max_grep_matches\)/);
    }
  });

  test("lang limits the files; a pattern no grammar accepts is an error; a broken one gets a note", async () => {
    fx.write({ "s5/a.ts": "print(1);\n", "s5/b.py": "print(1)\n" });
    const py = await runOk("ast_search", { pattern: "print($A)", lang: "py", path: "s5" });
    assert.deepEqual(
      py.matches.map((m: any) => m.match),
      ["s5/b.py:1: print(1)"],
    );
    const bad = await run("ast_search", { pattern: "$$$", path: "s5" });
    assert.match(expectError(bad).message, /Expected `pattern` to be a valid ast-grep pattern/);
    const broken = await runOk("ast_search", { pattern: "print(", path: "s5" });
    assert.equal(broken.count, 0);
    assert.match(broken.note, /syntax error/);
    const unknown = await run("ast_search", { pattern: "x", lang: "cobol" });
    assert.match(expectError(unknown).message, /Expected `lang` to be one of typescript, tsx, javascript/);
  });

  test("the deadline stops a search over a large tree, saying how far it got", async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 40; d++)
      for (let f = 0; f < 50; f++)
        files[`big/d${String(d).padStart(2, "0")}/f${f}.ts`] =
          `export function f${f}() {\n  return call(${d}, ${f});\n}\n`;
    fx.write(files);
    const r = await runOk("ast_search", { pattern: "call($A, $B)", path: "big" }, config({}, { _ast_deadline: "1ms" }));
    assert.equal(r.stopped, "deadline");
    assert.ok(r.files_searched < 2000, `${r.files_searched} files searched`);
    assert.match(
      r.note,
      /^Stopped by the time budget after \d+ ms \(tools_policies\.ast\._ast_deadline = 1 ms\): searched \d+ of (at least )?\d+/,
    );
    // With the default budget the same search finishes.
    const full = await runOk(
      "ast_search",
      { pattern: "call($A, $B)", path: "big" },
      config({ _max_grep_matches: "5000", _max_output_bytes: "1000000" }),
    );
    assert.equal(full.stopped, undefined);
    assert.equal(full.files_searched, 2000);
    assert.equal(full.count, 2000);
  });

  test("the budget is cooperative: a clock that runs out stops the walk and the search cleanly", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`s6/f${String(i).padStart(2, "0")}.ts`] = "target();\n";
    fx.write(files);
    const target = await resolvePath({ root: fx.root, controlPlane: [], deniedSubstrings: [] }, "s6");
    const req = (budget: ReturnType<typeof startBudget>) => ({
      pattern: "target()",
      root: fx.root,
      target: { abs: target.abs, rel: target.rel, isFile: false },
      resolve: (rel: string) => resolvePath({ root: fx.root, controlPlane: [], deniedSubstrings: [] }, rel),
      visibility: { hides: () => undefined },
      maxMatches: 1000,
      maxReadBytes: 1 << 20,
      budget,
    });
    let ticks = 0;
    const clock = () => ticks++; // one "millisecond" per look at the clock
    const stopped = await searchTree(req(startBudget(40, undefined, clock)));
    assert.equal(stopped.walkComplete, false);
    assert.ok(stopped.filesFound < 60 && stopped.filesSearched <= stopped.filesFound);
    assert.deepEqual(
      stopped.matches.map((m) => m.rel),
      stopped.matches.map((_, i) => `s6/f${String(i).padStart(2, "0")}.ts`),
    );
    const ctl = new AbortController();
    let looks = 0;
    const cancelling = () => (++looks === 80 ? (ctl.abort(), 0) : 0);
    const cancelled = startBudget(60_000, ctl.signal, cancelling);
    const c = await searchTree(req(cancelled));
    assert.equal(cancelled.reason(), "cancelled");
    assert.ok(c.filesSearched < 60);
    const whole = await searchTree(req(startBudget(60_000)));
    assert.equal(whole.filesSearched, 60);
    assert.equal(whole.matches.length, 60);
  });
});

describe("ast_rewrite_preview", () => {
  test("returns the exact diff of a rewrite and writes nothing", async () => {
    const a = 'export function f(x: number) {\n  console.log(x);\n  if (x) {\n    console.log("big", x);\n  }\n}\n';
    const b = "console.log(console.log(1));\n";
    fx.write({ "rw/a.ts": a, "rw/b.ts": b, "rw/c.ts": "const nothing = 1;\n" });
    const before = snapshotTree();
    const r = await runOk("ast_rewrite_preview", {
      pattern: "console.log($$$ARGS)",
      rewrite: "logger.debug($$$ARGS)",
      path: "rw",
    });
    assert.deepEqual(snapshotTree(), before, "the preview must not write");
    assert.equal(r.files_changed, 2);
    assert.equal(r.replacements, 3);
    const parts = r.diff.split(/(?=^--- )/m);
    assert.equal(parts.length, 2);
    assert.equal(applyPatch(a, parts[0]), a.replaceAll("console.log(", "logger.debug("));
    assert.equal(applyPatch(b, parts[1]), "logger.debug(console.log(1));\n"); // the outer match wins; the inner is left
    assert.match(r.note, /^Nothing was written\./);
  });

  test("a multi-line template takes the indentation of the matched line", async () => {
    fx.write({ "rw2/a.py": "def f(x):\n    print(x)\n" });
    const r = await runOk("ast_rewrite_preview", {
      pattern: "print($A)",
      rewrite: "if $A:\n    log($A)",
      path: "rw2/a.py",
    });
    assert.equal(applyPatch("def f(x):\n    print(x)\n", r.diff), "def f(x):\n    if x:\n        log(x)\n");
    assert.equal(readFileSync(path.join(fx.root, "rw2/a.py"), "utf8"), "def f(x):\n    print(x)\n");
  });
});
