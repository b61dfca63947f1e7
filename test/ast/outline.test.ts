import assert from "node:assert/strict";
import { copyFileSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, describe, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { expectError, expectOk, expectRefused } from "../helpers/expect.js";

const fx = makeFixture("latch-outline-");
after(() => fx.cleanup());
const config = (localFs: Record<string, string> = {}, ast: Record<string, string> = {}) => ({
  toolsPolicies: { local_fs: localFs, ast },
  agents: {},
});

async function outline(args: Record<string, unknown>, cfg = config({ _max_output_bytes: "4000000" })) {
  const host = await fx.host({ config: cfg });
  return host.call("outline", args);
}
async function outlineOk(args: Record<string, unknown>, cfg?: ReturnType<typeof config>) {
  const out = await outline(args, cfg);
  return expectOk(out).result;
}

/** A 5,000-line TypeScript module of the usual shapes, with the line of every declaration recorded. */
function bigModule(): { text: string; expected: string[] } {
  const out: string[] = [];
  const expected: string[] = [];
  const at = () => out.length + 1;
  out.push('import { readFile } from "node:fs/promises";', "");
  for (let i = 0; out.length < 5000; i++) {
    let s = at();
    out.push(`export interface Options${i} {`, `  name: string;`, `  size?: number;`, `}`, "");
    expected.push(`${s}-${s + 3} interface Options${i}: export interface Options${i}`);
    s = at();
    out.push(`export class Service${i}<T> extends Base implements Disposable {`);
    const cls = expected.length;
    expected.push("");
    let m = at();
    out.push(`  private cache = new Map<string, T>();`);
    expected.push(`  ${m}-${m} field cache: private cache = new Map<string, T>()`);
    m = at();
    out.push(`  constructor(private readonly opts: Options${i}) {`, `    super();`, `  }`);
    expected.push(`  ${m}-${m + 2} method constructor: constructor(private readonly opts: Options${i})`);
    m = at();
    out.push(
      `  async load(key: string,`,
      `      fallback?: T): Promise<T | undefined> {`,
      `    const hit = this.cache.get(key);`,
      `    if (hit) return hit;`,
      `    const raw = await readFile(key, "utf8");`,
      `    return JSON.parse(raw) as T;`,
      `  }`,
    );
    expected.push(`  ${m}-${m + 6} method load: async load(key: string, fallback?: T): Promise<T | undefined>`);
    m = at();
    out.push(`  static create(): Service${i}<unknown> {`, `    return new Service${i}({ name: "x" });`, `  }`);
    expected.push(`  ${m}-${m + 2} method create: static create(): Service${i}<unknown>`);
    out.push(`}`, "");
    expected[cls] =
      `${s}-${at() - 2} class Service${i}: export class Service${i}<T> extends Base implements Disposable`;
    s = at();
    out.push(`export function helper${i}(a: number, b: number): number {`, `  return a + b * ${i};`, `}`, "");
    expected.push(`${s}-${s + 2} function helper${i}: export function helper${i}(a: number, b: number): number`);
    s = at();
    out.push(
      `export const handler${i} = async (req: Request): Promise<Response> => {`,
      `  return new Response(String(${i}));`,
      `};`,
      "",
    );
    expected.push(
      `${s}-${s + 2} function handler${i}: export const handler${i} = async (req: Request): Promise<Response> =>`,
    );
    s = at();
    out.push(`type Key${i} = keyof Options${i};`, "");
    expected.push(`${s}-${s} type Key${i}: type Key${i} = keyof Options${i}`);
  }
  return { text: out.join("\n") + "\n", expected };
}

describe("outline", () => {
  test("a 5,000-line TypeScript file: every declaration, exact line ranges and one-line signatures", async () => {
    const { text, expected } = bigModule();
    assert.ok(text.split("\n").length >= 5000);
    fx.write({ "big.ts": text });
    const r = await outlineOk({ path: "big.ts" });
    assert.equal(r.language, "typescript");
    assert.equal(r.declarations, expected.length);
    assert.deepEqual(r.outline.split("\n"), expected);
    assert.equal(r.note, undefined);
  });

  test("the output limit cuts the outline at whole entries and says where the rest start", async () => {
    const { text, expected } = bigModule();
    fx.write({ "big2.ts": text });
    const r = await outlineOk({ path: "big2.ts" }, config({ _max_output_bytes: "4096" }));
    const lines = r.outline.split("\n");
    assert.ok(lines.length < expected.length);
    assert.deepEqual(lines, expected.slice(0, lines.length));
    assert.ok(Buffer.byteLength(r.outline) <= 4096);
    const nextStart = expected[lines.length].trim().split("-")[0];
    assert.match(
      r.note,
      new RegExp(`showing ${lines.length} of ${expected.length} declarations\\. The rest start at line ${nextStart}`),
    );
  });

  test("a real-world declaration file (TypeScript's own typescript.d.ts, 11k lines)", async () => {
    const dts = createRequire(import.meta.url).resolve("typescript/lib/typescript.d.ts");
    copyFileSync(dts, path.join(fx.root, "typescript.d.ts"));
    const total = readFileSync(dts, "utf8").split("\n").length;
    const r = await outlineOk({ path: "typescript.d.ts" });
    const rows: string[] = r.outline.split("\n");
    assert.ok(r.declarations > 1000, `${r.declarations} declarations`);
    assert.match(rows[0], /^\d+-\d+ namespace ts: declare namespace ts$/);
    assert.ok(
      rows.some((l) =>
        /^ {2}\d+-\d+ function createSourceFile: function createSourceFile\(fileName: string, sourceText: string,/.test(
          l,
        ),
      ),
    );
    assert.ok(rows.some((l) => /^ {2}\d+-\d+ interface SourceFile: interface SourceFile extends Declaration/.test(l)));
    for (const row of rows) {
      const m = /^( *)(\d+)-(\d+) (\w+) (\S+): (.+)$/.exec(row);
      assert.ok(m, `malformed row: ${row}`);
      assert.ok(Number(m[2]) <= Number(m[3]) && Number(m[3]) <= total, row);
    }
  });

  test("Python, Go, Rust and Java, from grammars npm ships prebuilt", async () => {
    fx.write({
      "m.py":
        "import os\nLIMIT = 3\n\n@cache\ndef load(path: str) -> str:\n    return path\n\nclass Store(Base):\n    size = 0\n    def get(self, key):\n        return key\n",
      "m.go":
        "package m\n\nconst Limit = 3\n\ntype Store struct {\n\tsize int\n}\n\ntype Getter interface {\n\tGet(k string) string\n}\n\nfunc (s *Store) Get(k string) string {\n\treturn k\n}\n\nfunc Load(path string) (string, error) {\n\treturn path, nil\n}\n",
      "m.rs":
        "pub struct Store { size: u32 }\n\nimpl Getter for Store {\n    fn get(&self, k: &str) -> String {\n        k.to_string()\n    }\n}\n\npub fn load(path: &str) -> String {\n    path.to_string()\n}\n",
      "M.java":
        "package m;\n\npublic class Store {\n  private int size = 0;\n  public Store() {}\n  public String get(String k) {\n    return k;\n  }\n}\n",
    });
    assert.equal(
      (await outlineOk({ path: "m.py" })).outline,
      [
        "2-2 variable LIMIT: LIMIT = 3",
        "5-6 function load: def load(path: str) -> str",
        "8-11 class Store: class Store(Base)",
        "  9-9 attribute size: size = 0",
        "  10-11 method get: def get(self, key)",
      ].join("\n"),
    );
    assert.equal(
      (await outlineOk({ path: "m.go" })).outline,
      [
        "3-3 const Limit: const Limit = 3",
        "5-7 struct Store: type Store struct",
        "9-11 interface Getter: type Getter interface",
        "13-15 method Get: func (s *Store) Get(k string) string",
        "17-19 function Load: func Load(path string) (string, error)",
      ].join("\n"),
    );
    assert.equal(
      (await outlineOk({ path: "m.rs" })).outline,
      [
        "1-1 struct Store: pub struct Store",
        "3-7 impl Getter for Store: impl Getter for Store",
        "  4-6 method get: fn get(&self, k: &str) -> String",
        "9-11 function load: pub fn load(path: &str) -> String",
      ].join("\n"),
    );
    assert.equal(
      (await outlineOk({ path: "M.java" })).outline,
      [
        "3-9 class Store: public class Store",
        "  4-4 field size: private int size = 0",
        "  5-5 constructor Store: public Store()",
        "  6-8 method get: public String get(String k)",
      ].join("\n"),
    );
  });

  test("C, through preprocessor blocks and nested declarators", async () => {
    fx.write({
      "m.c":
        "#include <stdio.h>\n#define MAX 10\nstatic int counter = 0;\nint add(int a, int b);\nstruct point { int x; int y; };\ntypedef struct { int w; } size2;\nenum color { RED, GREEN };\nstatic inline int *\nmake(int n)\n{\n  return 0;\n}\n#ifdef DEBUG\nvoid trace(const char *msg) { puts(msg); }\n#endif\nint main(void) { return add(1, 2); }\n",
    });
    assert.equal(
      (await outlineOk({ path: "m.c" })).outline,
      [
        "2-2 macro MAX: #define MAX 10",
        "3-3 variable counter: static int counter = 0",
        "4-4 prototype add: int add(int a, int b)",
        "5-5 struct point: struct point",
        "6-6 typedef size2: typedef struct { int w; } size2",
        "7-7 enum color: enum color",
        "8-12 function make: static inline int * make(int n)",
        "14-14 function trace: void trace(const char *msg)",
        "16-16 function main: int main(void)",
      ].join("\n"),
    );
    const host = await fx.host();
    const r = await host.call("ast_search", { pattern: "add($A, $B)", path: "m.c" });
    assert.deepEqual(expectOk<{ matches: unknown }>(r).result.matches, [
      { match: "m.c:16: add(1, 2)", vars: { A: "1", B: "2" } },
    ]);
  });

  test("TSX and JavaScript", async () => {
    fx.write({
      "c.tsx":
        "import React from 'react';\n\nexport function Button({ label }: Props) {\n  return <button>{label}</button>;\n}\n\nexport const Card = (p: Props) => (\n  <div>{p.title}</div>\n);\n",
      "m.mjs":
        "export class Queue {\n  #items = [];\n  push(x) {\n    this.#items.push(x);\n  }\n}\nfunction* ids() {\n  yield 1;\n}\nmodule.exports = { Queue };\n",
    });
    assert.equal(
      (await outlineOk({ path: "c.tsx" })).outline,
      [
        "3-5 function Button: export function Button({ label }: Props)",
        "7-9 function Card: export const Card = (p: Props) => (",
      ].join("\n"),
    );
    assert.equal(
      (await outlineOk({ path: "m.mjs" })).outline,
      [
        "1-6 class Queue: export class Queue",
        "  2-2 field #items: #items = []",
        "  3-5 method push: push(x)",
        "7-9 function ids: function* ids()",
      ].join("\n"),
    );
  });

  test("a link out of the workspace is refused, and nothing outside is read", async () => {
    writeFileSync(path.join(fx.base, "secret.ts"), "export const token = 'outside';\n");
    symlinkSync(path.join(fx.base, "secret.ts"), path.join(fx.root, "link.ts"));
    const out = await outline({ path: "link.ts" });
    assert.equal(out.status, "refused");
    assert.doesNotMatch(JSON.stringify(out), /token/);
  });

  test("files it cannot outline are refused or errors that name the fix", async () => {
    fx.write({
      "notes.txt": "hello\n",
      "style.css": "a { color: red }\n",
      "huge.ts": "export const x = 1;\n".repeat(2000),
      "blob.ts": Buffer.from([0, 1, 2, 3]),
    });
    const unknown = await outline({ path: "notes.txt" });
    assert.match(expectError(unknown).message, /not known from its name\. Pass lang/);
    const css = await outline({ path: "style.css" });
    assert.match(expectError(css).message, /no declaration rules for css/);
    const big = await outline({ path: "huge.ts" }, config({ _max_read_bytes: "1024" }));
    assert.match(expectRefused(big).reason, /over _max_read_bytes/);
    assert.equal((await outline({ path: "blob.ts" })).status, "refused");
    assert.equal((await outline({ path: "missing.ts" })).status, "error");
    const outside = await outline({ path: "../outside.ts" });
    assert.equal(outside.status, "refused");
    const asPy = await outlineOk({ path: "notes.txt", lang: "python" });
    assert.equal(asPy.declarations, 0);
  });
});
