// The recovery table: realistic slips of a model that edits by exact string. For each, the exact-string
// edit fails (that is the slip), and the same intent sent as anchored edits from the model's own
// anchored read either succeeds, or is refused quoting the line's current `N#ID|text` — from which a
// retry, with no re-read, succeeds.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { anchoredLine, splitLines } from "../../../src/edit/anchors.js";
import type { AnchoredEdit } from "../../../src/edit/anchored-edits.js";
import { makeFixture } from "../../helpers/fixture.js";
import { anchorsOf, call, ok, readAnchors } from "./util.js";
import { expectRefused } from "../../helpers/expect.js";

type A = (line: number) => string;
interface Quote {
  now?: string;
  moved?: string;
}
interface Slip {
  kind:
    "whitespace drift" | "tab turned into spaces" | "changed since read" | "duplicated block" | "look-alike characters";
  what: string;
  ext: string;
  file: string;
  exact: { old_string: string; new_string: string };
  edits: (a: A) => AnchoredEdit[];
  /** Someone else's change between the model's read and its edit. */
  later?: string;
  /** The file after the anchored edit succeeds (directly, or after the retry). */
  expect: string;
  /** Lines (in the current file) the refusal must quote; the retry is built from the quotes alone. */
  refused?: number[];
  retry?: (
    q: Record<string, Quote>,
    a: A,
    window: (from: number, to: number) => Promise<A>,
  ) => AnchoredEdit[] | Promise<AnchoredEdit[]>;
}

const ts = "export function area(r: number): number {\n    const pi = 3.14159;\n    return pi * r * r;\n}\n";
const py = "def load(path):\n    with open(path) as f:\n        data = f.read()\n    return data\n";
const go = "package main\n\nfunc main() {\n\tx := 1\n\tif x > 0 {\n\t\tprintln(x)\n\t}\n}\n";
const dupFns =
  "function a() {\n  if (!ok) {\n    return null;\n  }\n}\n\nfunction b() {\n  if (!ok) {\n    return null;\n  }\n}\n";

const SLIPS: Slip[] = [
  // ── whitespace drift ──
  {
    kind: "whitespace drift",
    what: "2-space indent in old_string, file uses 4",
    ext: "ts",
    file: ts,
    exact: { old_string: "{\n  const pi = 3.14159;", new_string: "{\n  const pi = Math.PI;" },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["    const pi = Math.PI;"] }],
    expect: ts.replace("3.14159", "Math.PI"),
  },
  {
    kind: "whitespace drift",
    what: "trailing spaces on the file's line are dropped",
    ext: "js",
    file: "let total = 0;   \nfor (const x of xs) total += x;\n",
    exact: { old_string: "let total = 0;\nfor", new_string: "let total = 1;\nfor" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["let total = 1;"] }],
    expect: "let total = 1;\nfor (const x of xs) total += x;\n",
  },
  {
    kind: "whitespace drift",
    what: "a trailing space added to old_string",
    ext: "rb",
    file: "puts 'hello'\nputs 'world'\n",
    exact: { old_string: "puts 'hello' \n", new_string: "puts 'hi'\n" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["puts 'hi'"] }],
    expect: "puts 'hi'\nputs 'world'\n",
  },
  {
    kind: "whitespace drift",
    what: "the blank line between two statements is left out",
    ext: "ts",
    file: "const a = 1;\n\nconst b = 2;\n",
    exact: { old_string: "const a = 1;\nconst b = 2;", new_string: "const a = 1;\nconst b = 3;" },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["const b = 3;"] }],
    expect: "const a = 1;\n\nconst b = 3;\n",
  },
  {
    kind: "whitespace drift",
    what: "a blank line that holds spaces is copied as empty",
    ext: "py",
    file: "x = 1\n    \ny = 2\n",
    exact: { old_string: "x = 1\n\ny = 2", new_string: "x = 1\n\ny = 20" },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["y = 20"] }],
    expect: "x = 1\n    \ny = 20\n",
  },
  {
    kind: "whitespace drift",
    what: "aligned double spaces collapsed to one",
    ext: "c",
    file: "int  width  = 10;\nint  height = 20;\n",
    exact: { old_string: "int width = 10;", new_string: "int width = 12;" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["int  width  = 12;"] }],
    expect: "int  width  = 12;\nint  height = 20;\n",
  },
  {
    kind: "whitespace drift",
    what: "a Python block re-indented by 2 in old_string",
    ext: "py",
    file: py,
    exact: {
      old_string: "  with open(path) as f:\n    data = f.read()",
      new_string: "  with open(path, encoding='utf-8') as f:\n    data = f.read()",
    },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["    with open(path, encoding='utf-8') as f:"] }],
    expect: py.replace("open(path)", "open(path, encoding='utf-8')"),
  },
  {
    kind: "whitespace drift",
    what: "a nested YAML key at the wrong depth",
    ext: "yaml",
    file: "server:\n  http:\n    port: 80\n  tls: false\n",
    exact: { old_string: "http:\n  port: 80", new_string: "http:\n  port: 8080" },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["    port: 8080"] }],
    expect: "server:\n  http:\n    port: 8080\n  tls: false\n",
  },
  {
    kind: "whitespace drift",
    what: "Markdown hard-break spaces dropped",
    ext: "md",
    file: "Line one  \nLine two\n",
    exact: { old_string: "Line one\nLine two", new_string: "Line one\nLine 2" },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["Line 2"] }],
    expect: "Line one  \nLine 2\n",
  },
  {
    kind: "whitespace drift",
    what: "JSON indented by 4 in old_string, file uses 2",
    ext: "json",
    file: '{\n  "name": "x",\n  "version": "1.0.0"\n}\n',
    exact: { old_string: '    "version": "1.0.0"', new_string: '    "version": "1.1.0"' },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ['  "version": "1.1.0"'] }],
    expect: '{\n  "name": "x",\n  "version": "1.1.0"\n}\n',
  },
  {
    kind: "whitespace drift",
    what: "a tab in old_string where the file has spaces",
    ext: "ts",
    file: ts,
    exact: { old_string: "\treturn pi * r * r;", new_string: "\treturn pi * r ** 2;" },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["    return pi * r ** 2;"] }],
    expect: ts.replace("r * r;", "r ** 2;"),
  },
  {
    kind: "whitespace drift",
    what: "a space before the semicolon in old_string",
    ext: "java",
    file: "int count = items.size();\nreturn count;\n",
    exact: { old_string: "int count = items.size() ;", new_string: "long count = items.size();" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["long count = items.size();"] }],
    expect: "long count = items.size();\nreturn count;\n",
  },

  // ── a tab turned into spaces ──
  {
    kind: "tab turned into spaces",
    what: "Go body indented with 4 spaces in old_string",
    ext: "go",
    file: go,
    exact: { old_string: "    x := 1", new_string: "    x := 2" },
    edits: (a) => [{ op: "replace", pos: a(4), lines: ["\tx := 2"] }],
    expect: go.replace("x := 1", "x := 2"),
  },
  {
    kind: "tab turned into spaces",
    what: "Makefile recipe tab as 8 spaces",
    ext: "mk",
    file: "build:\n\tgo build ./...\n\ntest:\n\tgo test ./...\n",
    exact: { old_string: "build:\n        go build ./...", new_string: "build:\n        go build -v ./..." },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["\tgo build -v ./..."] }],
    expect: "build:\n\tgo build -v ./...\n\ntest:\n\tgo test ./...\n",
  },
  {
    kind: "tab turned into spaces",
    what: "TSV fields separated by spaces in old_string",
    ext: "tsv",
    file: "id\tname\tqty\n1\tbolt\t40\n2\tnut\t15\n",
    exact: { old_string: "2 nut 15", new_string: "2 nut 16" },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["2\tnut\t16"] }],
    expect: "id\tname\tqty\n1\tbolt\t40\n2\tnut\t16\n",
  },
  {
    kind: "tab turned into spaces",
    what: "a nested Go block: two tabs as 8 spaces",
    ext: "go",
    file: go,
    exact: { old_string: "        println(x)", new_string: "        println(x + 1)" },
    edits: (a) => [{ op: "replace", pos: a(6), lines: ["\t\tprintln(x + 1)"] }],
    expect: go.replace("println(x)", "println(x + 1)"),
  },
  {
    kind: "tab turned into spaces",
    what: "a C function with tab indent, old_string with 2 spaces over two lines",
    ext: "c",
    file: "int f(int a) {\n\tint b = a * 2;\n\treturn b;\n}\n",
    exact: { old_string: "  int b = a * 2;\n  return b;", new_string: "  return a * 2;" },
    edits: (a) => [{ op: "replace", pos: a(2), end: a(3), lines: ["\treturn a * 2;"] }],
    expect: "int f(int a) {\n\treturn a * 2;\n}\n",
  },
  {
    kind: "tab turned into spaces",
    what: "a tab-aligned comment expanded to spaces",
    ext: "s",
    file: "mov eax, 1\t; syscall number\nint 0x80\n",
    exact: { old_string: "mov eax, 1    ; syscall number", new_string: "mov eax, 4    ; write" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["mov eax, 4\t; write"] }],
    expect: "mov eax, 4\t; write\nint 0x80\n",
  },

  // ── a line that changed since it was read ──
  {
    kind: "changed since read",
    what: "a formatter switched the line's quotes",
    ext: "ts",
    file: "import x from 'x';\nconst name = 'latch';\n",
    later: 'import x from "x";\nconst name = "latch";\n',
    exact: { old_string: "const name = 'latch';", new_string: "const name = 'Latch';" },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["const name = 'Latch';"] }],
    refused: [2],
    retry: (q) => [{ op: "replace", pos: q["edits[0].pos"].now!, lines: ['const name = "Latch";'] }],
    expect: 'import x from "x";\nconst name = "Latch";\n',
  },
  {
    kind: "changed since read",
    what: "another edit changed the number on the line",
    ext: "toml",
    file: "[pool]\nsize = 4\ntimeout = 30\n",
    later: "[pool]\nsize = 8\ntimeout = 30\n",
    exact: { old_string: "size = 4", new_string: "size = 16" },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["size = 16"] }],
    refused: [2],
    retry: (q) => [{ op: "replace", pos: q["edits[0].pos"].now!, lines: ["size = 16"] }],
    expect: "[pool]\nsize = 16\ntimeout = 30\n",
  },
  {
    kind: "changed since read",
    what: "an import was added above, so the line moved down",
    ext: "ts",
    file: "import a from 'a';\n\nexport const limit = 10;\n",
    later: "import a from 'a';\nimport b from 'b';\n\nexport const limit = 10;\n",
    exact: {
      old_string: "import a from 'a';\n\nexport const limit = 10;",
      new_string: "import a from 'a';\n\nexport const limit = 20;",
    },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ["export const limit = 20;"] }],
    refused: [3],
    retry: (q) => [{ op: "replace", pos: q["edits[0].pos"].moved!, lines: ["export const limit = 20;"] }],
    expect: "import a from 'a';\nimport b from 'b';\n\nexport const limit = 20;\n",
  },
  {
    kind: "changed since read",
    what: "the target line was deleted by someone else",
    ext: "txt",
    file: "keep\nold note\nlast\n",
    later: "keep\nlast\n",
    exact: { old_string: "old note", new_string: "new note" },
    edits: (a) => [{ op: "replace", pos: a(2), lines: ["new note"] }],
    refused: [2],
    retry: (q) => [{ op: "insert_before", pos: q["edits[0].pos"].now!, lines: ["new note"] }],
    expect: "keep\nnew note\nlast\n",
  },
  {
    kind: "changed since read",
    what: "the last line of a replaced range was reflowed",
    ext: "py",
    file: "items = [\n    1, 2,\n    3]\nprint(items)\n",
    later: "items = [\n    1, 2,\n    3,\n]\nprint(items)\n",
    exact: { old_string: "items = [\n    1, 2,\n    3]", new_string: "items = [1, 2, 3]" },
    edits: (a) => [{ op: "replace", pos: a(1), end: a(3), lines: ["items = [1, 2, 3]"] }],
    // The quote shows line 3 is now "3,": the range grew, so the model reads a few lines (not the file) and retries.
    refused: [3],
    retry: async (_q, a, window) => {
      const w = await window(1, 5);
      return [{ op: "replace", pos: a(1), end: w(4), lines: ["items = [1, 2, 3]"] }];
    },
    expect: "items = [1, 2, 3]\nprint(items)\n",
  },
  {
    kind: "changed since read",
    what: "two of the edits' lines changed; both are quoted in one refusal",
    ext: "ini",
    file: "[a]\nx=1\n[b]\ny=2\n",
    later: "[a]\nx=10\n[b]\ny=20\n",
    exact: { old_string: "x=1\n", new_string: "x=100\n" },
    edits: (a) => [
      { op: "replace", pos: a(2), lines: ["x=100"] },
      { op: "replace", pos: a(4), lines: ["y=200"] },
    ],
    refused: [2, 4],
    retry: (q) => [
      { op: "replace", pos: q["edits[0].pos"].now!, lines: ["x=100"] },
      { op: "replace", pos: q["edits[1].pos"].now!, lines: ["y=200"] },
    ],
    expect: "[a]\nx=100\n[b]\ny=200\n",
  },
  {
    kind: "changed since read",
    what: "the file was cut short, so the anchor is past the end",
    ext: "log",
    file: "one\ntwo\nthree\nfour\n",
    later: "one\ntwo\n",
    exact: { old_string: "four", new_string: "4" },
    edits: (a) => [{ op: "replace", pos: a(4), lines: ["4"] }],
    refused: [],
    retry: (_q, a) => [{ op: "insert_after", pos: a(2), lines: ["4"] }],
    expect: "one\ntwo\n4\n",
  },
  {
    kind: "changed since read",
    what: "an editor stripped trailing spaces on save",
    ext: "txt",
    file: "title  \nbody\n",
    later: "title\nbody\n",
    exact: { old_string: "title  \n", new_string: "Title\n" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["Title"] }],
    refused: [1],
    retry: (q) => [{ op: "replace", pos: q["edits[0].pos"].now!, lines: ["Title"] }],
    expect: "Title\nbody\n",
  },

  // ── duplicated blocks ──
  {
    kind: "duplicated block",
    what: "two functions end the same way; change the second",
    ext: "ts",
    file: dupFns,
    exact: {
      old_string: "  if (!ok) {\n    return null;\n  }",
      new_string: "  if (!ok) {\n    return undefined;\n  }",
    },
    edits: (a) => [{ op: "replace", pos: a(9), lines: ["    return undefined;"] }],
    expect: dupFns.replace(/return null;(?![\s\S]*return null;)/, "return undefined;"),
  },
  {
    kind: "duplicated block",
    what: "copy-pasted test cases; rename the third",
    ext: "ts",
    file: 'it("works", () => {});\nit("works", () => {});\nit("works", () => {});\n',
    exact: { old_string: 'it("works", () => {});', new_string: 'it("works on empty input", () => {});' },
    edits: (a) => [{ op: "replace", pos: a(3), lines: ['it("works on empty input", () => {});'] }],
    expect: 'it("works", () => {});\nit("works", () => {});\nit("works on empty input", () => {});\n',
  },
  {
    kind: "duplicated block",
    what: "the same config section twice; change the second port",
    ext: "conf",
    file: "[server]\nport = 80\n\n[server]\nport = 80\n",
    exact: { old_string: "[server]\nport = 80", new_string: "[server]\nport = 8080" },
    edits: (a) => [{ op: "replace", pos: a(5), lines: ["port = 8080"] }],
    expect: "[server]\nport = 80\n\n[server]\nport = 8080\n",
  },
  {
    kind: "duplicated block",
    what: "insert after one closing brace among many",
    ext: "js",
    file: "if (a) {\n}\nif (b) {\n}\nif (c) {\n}\n",
    exact: { old_string: "}\n", new_string: "}\nlog('b');\n" },
    edits: (a) => [{ op: "insert_after", pos: a(4), lines: ["log('b');"] }],
    expect: "if (a) {\n}\nif (b) {\n}\nlog('b');\nif (c) {\n}\n",
  },
  {
    kind: "duplicated block",
    what: "an import duplicated by mistake; delete the second",
    ext: "ts",
    file: "import fs from 'fs';\nimport path from 'path';\nimport fs from 'fs';\n",
    exact: { old_string: "import fs from 'fs';\n", new_string: "" },
    edits: (a) => [{ op: "delete", pos: a(3) }],
    expect: "import fs from 'fs';\nimport path from 'path';\n",
  },
  {
    kind: "duplicated block",
    what: "identical list items; replace the third",
    ext: "html",
    file: "<ul>\n  <li>Item</li>\n  <li>Item</li>\n  <li>Item</li>\n</ul>\n",
    exact: { old_string: "  <li>Item</li>", new_string: "  <li>Item 3</li>" },
    edits: (a) => [{ op: "replace", pos: a(4), lines: ["  <li>Item 3</li>"] }],
    expect: "<ul>\n  <li>Item</li>\n  <li>Item</li>\n  <li>Item 3</li>\n</ul>\n",
  },
  {
    kind: "duplicated block",
    what: "the same break in every case; insert before the second",
    ext: "c",
    file: "case 1:\n  f();\n  break;\ncase 2:\n  g();\n  break;\n",
    exact: { old_string: "  break;", new_string: "  h();\n  break;" },
    edits: (a) => [{ op: "insert_before", pos: a(6), lines: ["  h();"] }],
    expect: "case 1:\n  f();\n  break;\ncase 2:\n  g();\n  h();\n  break;\n",
  },

  // ── look-alike characters ──
  {
    kind: "look-alike characters",
    what: "a decomposed é in the file, precomposed in old_string",
    ext: "txt",
    file: "Cafe\u0301 menu\nprices\n",
    exact: { old_string: "Caf\u00e9 menu", new_string: "Caf\u00e9 carte" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["Caf\u00e9 carte"] }],
    expect: "Caf\u00e9 carte\nprices\n",
  },
  {
    kind: "look-alike characters",
    what: "curly quotes in the file, straight quotes in old_string",
    ext: "md",
    file: "He said \u201chello\u201d.\n",
    exact: { old_string: 'He said "hello".', new_string: 'He said "goodbye".' },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["He said \u201cgoodbye\u201d."] }],
    expect: "He said \u201cgoodbye\u201d.\n",
  },
  {
    kind: "look-alike characters",
    what: "a no-break space in the file, a plain space in old_string",
    ext: "txt",
    file: "Total:\u00a042 EUR\n",
    exact: { old_string: "Total: 42 EUR", new_string: "Total: 43 EUR" },
    edits: (a) => [{ op: "replace", pos: a(1), lines: ["Total:\u00a043 EUR"] }],
    expect: "Total:\u00a043 EUR\n",
  },
];

/** The anchors a refusal quotes, per field: the line's current anchor, and where its old text went. */
function quotes(reason: string): Record<string, Quote> {
  const out: Record<string, Quote> = {};
  for (const row of reason.split("\n")) {
    const m =
      /^(edits\[\d+\]\.(?:pos|end)) `[^`]+`: (?:line \d+ is now `(\d+#[0-9A-Z]{4})\|[^\n]*?`|line \d+ is past the end[^;]*)(?:; a line with ID [0-9A-Z]{4} is at `(\d+#[0-9A-Z]{4})\|)?/.exec(
        row,
      );
    if (m) out[m[1]] = { now: m[2], moved: m[3] };
  }
  return out;
}

describe("recovery table: exact-string slips, recovered by anchors", () => {
  const fx = makeFixture("latch-recovery-");
  after(() => fx.cleanup());
  const disk = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");

  test("covers at least 30 slips of every required kind", () => {
    assert.ok(SLIPS.length >= 30, `${SLIPS.length} slips`);
    for (const k of ["whitespace drift", "tab turned into spaces", "changed since read", "duplicated block"]) {
      assert.ok(SLIPS.filter((s) => s.kind === k).length >= 5, k);
    }
  });

  SLIPS.forEach((slip, i) => {
    test(`${String(i + 1).padStart(2, "0")} ${slip.kind}: ${slip.what}`, async () => {
      const rel = `slip-${i + 1}.${slip.ext}`;
      fx.write({ [rel]: slip.file });
      const host = await fx.host();
      const model = `model-${i}`;
      const read = await readAnchors(host, rel, model);
      const a: A = (n) => read.get(n) ?? assert.fail(`no anchor for line ${n} in the read`);
      if (slip.later !== undefined) {
        execFileSync(process.execPath, [
          "-e",
          "require('fs').writeFileSync(process.argv[1], process.argv[2])",
          path.join(fx.root, rel),
          slip.later,
        ]);
      }
      const current = disk(rel);

      // The slip: the exact-string edit fails against the current file, and changes nothing.
      await ok(host, "read_file", { path: rel, force: true }, `exact-${i}`);
      const exact = await call(host, "edit_file", { path: rel, ...slip.exact }, `exact-${i}`);
      assert.notEqual(exact.status, "ok", `the exact-string edit was expected to slip: ${JSON.stringify(exact)}`);
      assert.equal(disk(rel), current);

      // The anchored path, from the model's own read.
      const out = await call(host, "hash_edit", { path: rel, edits: slip.edits(a) }, model);
      if (slip.refused === undefined) {
        assert.equal(out.status, "ok", JSON.stringify(out));
      } else {
        assert.equal(out.status, "refused", JSON.stringify(out));
        const reason = expectRefused(out).reason;
        const lines = splitLines(current);
        for (const n of slip.refused)
          assert.ok(
            reason.includes("`" + anchoredLine(n, lines[n - 1].text) + "`"),
            `line ${n} is not quoted: ${reason}`,
          );
        if (slip.refused.length === 0) assert.match(reason, /past the end/);
        assert.equal(disk(rel), current, "a refused call must leave the file untouched");
        const window = async (from: number, to: number): Promise<A> => {
          const r = await ok(
            host,
            "read_file_range",
            { path: rel, start_line: from, end_line: to, anchors: true },
            model,
          );
          const m = anchorsOf(r.content);
          return (n) => m.get(n) ?? assert.fail(`no anchor for line ${n}`);
        };
        await ok(host, "hash_edit", { path: rel, edits: await slip.retry!(quotes(reason), a, window) }, model);
      }
      assert.equal(disk(rel), slip.expect);
    });
  });
});
