// makeGlob compares a name's end with the pattern's literal tail before running the glob (issue 32).
// The tail must never turn a match away: every pattern here, odd glob syntax included, gives what
// picomatch alone gives, on names built to trip a tail read too far (quotes, `|`, `!`, escapes,
// braces, extglobs).
import assert from "node:assert/strict";
import { test } from "node:test";
import picomatch from "picomatch";
import { literalTail, makeGlob } from "../../src/browse/glob.js";
import { GLOB_OPTIONS } from "../../src/fs/glob.js";

const PATTERNS = [
  "*.ts",
  "*.md",
  "package.json",
  "*.ts|x",
  "x|*.md",
  "!*.ts",
  '"*.ts"',
  '*.ts"',
  '"a b".ts',
  "a\\*.ts",
  "a\\.ts",
  "*.{ts,md}",
  "{a,b}.ts",
  "*.+(ts|md)",
  "*.!(ts)",
  "@(a|b).ts",
  "*.[tm]s",
  "*.t?",
  "a$.ts",
  "a^b.ts",
  "#x.ts",
  "*.ts,md",
  "src/**/*.ts",
  "src/*.gen.ts",
  "**",
  "*",
  "a.",
  "*.TS",
  "**/*.d.ts",
];

const NAMES = [
  "a.ts",
  "b.ts",
  "a.md",
  "a b.ts",
  '"a b".ts',
  '"a.ts"',
  'a.ts"',
  "a*.ts",
  "a.ts|x",
  "x",
  "a$.ts",
  "a^b.ts",
  "#x.ts",
  "a.ts,md",
  "a.TS",
  "a.",
  "x.d.ts",
  "x.gen.ts",
  "new\nline.ts",
  "ünï.ts",
  ".hidden.ts",
  "noext",
];
const PATHS = [...NAMES, ...NAMES.map((n) => `src/${n}`), ...NAMES.map((n) => `src/deep/er/${n}`)];

test("the literal tail turns no match away: makeGlob answers as picomatch alone, for odd glob syntax", () => {
  for (const pattern of PATTERNS) {
    const glob = makeGlob(pattern);
    const plain = picomatch(pattern, GLOB_OPTIONS);
    const tail = literalTail(pattern);
    for (const p of PATHS) {
      const want = pattern.includes("/") ? plain(p) : plain(p.slice(p.lastIndexOf("/") + 1));
      assert.equal(glob(p), want, `${JSON.stringify(pattern)} on ${JSON.stringify(p)}`);
      if (want) assert.ok(p.endsWith(tail), `${JSON.stringify(pattern)}: tail ${JSON.stringify(tail)}`);
    }
  }
});

test("a tail is read only where it is sure: none for negations, alternatives and trailing syntax", () => {
  assert.equal(literalTail("*.ts"), ".ts");
  assert.equal(literalTail("src/**/test_*.py"), ".py");
  assert.equal(literalTail("!*.ts"), "");
  assert.equal(literalTail("*.ts|x"), "");
  assert.equal(literalTail("*.{ts,md}"), "");
  assert.equal(literalTail('*.ts"'), "");
  assert.equal(literalTail("*"), "");
});
