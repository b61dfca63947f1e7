// grep's multiline mode (rg -U), with both engines: a match across lines shows its first line number
// and all its lines, the output modes, offset and the cap work with it, the visibility rule holds,
// and the two engines give identical answers (random files with LF, CRLF and lone CRs).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import type { CallResult } from "../../src/host/types.js";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

type Out = Record<string, unknown> & { results?: string; total_matches?: number };
function ok(r: CallResult): Out {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return (r as { result: Out }).result;
}

/** Each engine searches the same tree; `vault` is denied, `ignored.txt` gitignored. */
const TREE = {
  "ml/a.ts": "function foo(\n  x: number,\n): void {\n}\nconst bar = 1;\nbaz();\n",
  "ml/b.txt": "one\r\ntwo\r\nthree\r\n",
  "ml/c.txt": "end\nstart\nend\nstart\n",
  "ml/.gitignore": "ignored.txt\n",
  "ml/ignored.txt": "function foo(\n  y\n",
  "ml/vault/secret.txt": "function foo(\n  secret\n",
};
const fx = makeFixture();
fx.write(TREE);
after(() => fx.cleanup());

const hosts = new Map<string, Promise<Host>>();
function host(engine: "rg" | "js", cap = 100): Promise<Host> {
  const key = `${engine}${cap}`;
  if (!hosts.has(key))
    hosts.set(
      key,
      fx.host({
        env: { PATH: process.env.PATH ?? "", LATCH_GREP_ENGINE: engine },
        config: {
          toolsPolicies: { local_fs: { _max_grep_matches: String(cap), _denied_path_substrings: "vault" } },
          agents: {},
        },
      }),
    );
  return hosts.get(key)!;
}

for (const engine of ["rg", "js"] as const) {
  describe(`grep multiline (${engine})`, () => {
    const grep = async (args: Record<string, unknown>, cap = 100) =>
      ok(await (await host(engine, cap)).call("grep", { path: "ml", multiline: true, ...args }));

    test("a match across lines shows its first line number and all its lines, and counts once", async () => {
      const out = await grep({ pattern: "foo\\(\\s*\\n\\s*x", regex: true });
      assert.equal(out.results, "ml/a.ts:1: function foo(\nml/a.ts:2:   x: number,");
      assert.equal(out.total_matches, 1);
      assert.equal(out.shown, 1);
      // A literal with a newline; `.` stops at a line break (no dotall); [\s\S] crosses it.
      assert.equal((await grep({ pattern: "bar = 1;\nbaz" })).results, "ml/a.ts:5: const bar = 1;\nml/a.ts:6: baz();");
      assert.equal((await grep({ pattern: "foo.*number", regex: true })).total_matches, 0);
      assert.equal((await grep({ pattern: "foo[\\s\\S]*?number", regex: true })).total_matches, 1);
      // Without multiline, a pattern with a newline is refused, naming the fix.
      const refused = await (await host(engine)).call("grep", { path: "ml", pattern: "a\nb" });
      assert.equal(refused.status, "error");
      assert.match(JSON.stringify(refused), /multiline: true/);
    });

    test("CRLF: lines end in \\r\\n, shown without the CR; `$` is before \\n only, as in rg", async () => {
      assert.equal((await grep({ pattern: "two\\nthree", regex: true })).total_matches, 0);
      const out = await grep({ pattern: "two\\r?\\nthree", regex: true, path: "ml/b.txt" });
      assert.equal(out.results, "2: two\n3: three");
      assert.equal((await grep({ pattern: "two$", regex: true, path: "ml/b.txt" })).total_matches, 0);
      assert.equal((await grep({ pattern: "two\\r$", regex: true, path: "ml/b.txt" })).total_matches, 1);
    });

    test("context, output modes and offset work on matches across lines", async () => {
      const ctx = await grep({ pattern: "end\\nstart", regex: true, path: "ml/c.txt", context: 1 });
      assert.equal(ctx.results, "1: end\n2: start\n3: end\n4: start");
      assert.equal(ctx.total_matches, 2);
      const files = await grep({ pattern: "\\n\\S", regex: true, output: "files_with_matches" });
      assert.deepEqual(files.files, ["ml/a.ts", "ml/b.txt", "ml/c.txt"]);
      const counts = await grep({ pattern: "end\\ns", regex: true, output: "count" });
      assert.deepEqual(counts.counts, [{ path: "ml/c.txt", matches: 2 }]);
      // Pages of 1 past the cap: each page shows the next match, all its lines.
      const pages = [];
      for (let offset = 0; offset < 3; offset++)
        pages.push((await grep({ pattern: "end\\ns", regex: true, offset }, 1)).results);
      assert.deepEqual(pages, ["ml/c.txt:1: end\nml/c.txt:2: start", "ml/c.txt:3: end\nml/c.txt:4: start", ""]);
    });

    test("the visibility rule: gitignored and denied files are neither searched nor named", async () => {
      const out = await grep({ pattern: "function foo\\(\\n", regex: true });
      assert.equal(out.results, "ml/a.ts:1: function foo(");
      assert.equal(String(JSON.stringify(out)).includes("secret"), false);
    });

    test("a huge file: a match across lines near its end is found, at its line", async () => {
      const lines = 600_000;
      mkdirSync(path.join(fx.root, "huge"), { recursive: true });
      writeFileSync(path.join(fx.root, "huge/big.txt"), "filler line of text\n".repeat(lines) + "last one\nreally\n");
      const out = ok(
        await (
          await host(engine)
        ).call("grep", { path: "huge", pattern: "one\\s+really", regex: true, multiline: true }),
      );
      assert.equal(out.results, `huge/big.txt:${lines + 1}: last one\nhuge/big.txt:${lines + 2}: really`);
    });
  });
}

describe("grep multiline: the engines agree", () => {
  test("past ten times the cap both engines stop counting after the same file (regex or literal, multiline or not)", async () => {
    const tree = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`many/f${i}.txt`, "x\n".repeat(20)]));
    fx.write(tree);
    for (const multiline of [true, false])
      for (const regex of [true, false]) {
        const args = { path: "many", pattern: regex ? "^x" : "x", regex, multiline };
        const a = ok(await (await host("rg", 3)).call("grep", args));
        assert.equal(a.total_matches, 40, "counting stops after the file that reaches 10 × the cap");
        assert.deepEqual(ok(await (await host("js", 3)).call("grep", args)), a, JSON.stringify(args));
      }
  });

  test("rg and the JS engine give identical answers on random files (LF, CRLF, lone CR), patterns, flags and modes", async () => {
    const rg = await host("rg", 3);
    const js = await host("js", 3);
    const piece = fc.constantFrom(
      ...["a", "b", "A", " ", ".", "\n", "\n", "\r\n", "\r", "é", "ab", "ba"],
      ...["ab\n", "\nba", "a\n\nb", "b\r\na", "é\n", "A\nB"],
    );
    const content = fc.array(piece, { maxLength: 60 }).map((p) => p.join(""));
    const literal = fc.record({
      pattern: fc.constantFrom("a\nb", "b\na", "\r\n", "a", "b\r\na", "é\n"),
      regex: fc.constant(false),
    });
    const regex = fc.record({
      pattern: fc.constantFrom(
        "a\\nb",
        "a\\s+b",
        "b$\\n^a",
        "a[^x]*b",
        "^b",
        "a.",
        "a$",
        "[ab]\\r?\\n",
        "(a|\\n)+b",
        "b\\n*a",
        "^$",
        "\\n\\n",
        "\\r",
        ".\\n.",
        "é\\s",
      ),
      regex: fc.constant(true),
    });
    let n = 0;
    const options = fc.record({
      case_sensitive: fc.boolean(),
      context: fc.integer({ min: 0, max: 2 }),
      output: fc.constantFrom("content", "content", "files_with_matches", "count"),
      offset: fc.constantFrom(0, 0, 2),
    });
    const tree = fc.array(content, { minLength: 1, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(tree, fc.oneof(literal, regex), options, async (files, pat, opts) => {
        const dir = `agree/case${n++}`;
        mkdirSync(path.join(fx.root, dir), { recursive: true });
        files.forEach((c, i) => writeFileSync(path.join(fx.root, dir, `f${i}.txt`), c));
        const args = { ...pat, ...opts, path: dir, multiline: true };
        const a = ok(await rg.call("grep", args));
        const b = ok(await js.call("grep", args));
        // Past the cap too: the first matches in path order, on both.
        assert.deepEqual(b, a, JSON.stringify({ args, files }));
      }),
      { numRuns: 150, seed: Number(process.env.LATCH_GREP_SEED ?? 20261201) },
    );
  });
});
