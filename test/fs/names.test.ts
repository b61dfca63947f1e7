// The one escaping of file names (src/fs/names.ts): every name shows as one line of valid UTF-8, and
// the shown form reads back to exactly the name's bytes; plain names are untouched.
import assert from "node:assert/strict";
import { test } from "node:test";
import { bytesToInternal, osPath, parseShown, showName } from "../../src/fs/names.js";

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
const shown = (b: Buffer) => showName(bytesToInternal(b));

test("each kind of odd name has one shown form", () => {
  assert.equal(shown(bytes("bad", [0xff], ".txt")), "bad\\xff.txt");
  assert.equal(shown(bytes("new\nline")), "new\\nline");
  assert.equal(shown(bytes("tab\there")), "tab\\there");
  assert.equal(shown(bytes("cr\rx")), "cr\\rx");
  assert.equal(shown(bytes("esc\x1b[0m")), "esc\\x1b[0m");
  assert.equal(shown(bytes("del\x7f")), "del\\x7f");
  assert.equal(shown(bytes("back\\slash")), "back\\\\slash");
  assert.equal(shown(bytes("a\\x41")), "a\\\\x41", "a name that looks like an escape has its backslash doubled");
  // Valid UTF-8 that hides or moves text: C1 controls, separators, bidi controls, invisible characters.
  assert.equal(shown(bytes("nel\u0085x")), "nel\\u0085x");
  assert.equal(shown(bytes("csi\u009b2K")), "csi\\u009b2K");
  assert.equal(shown(bytes("evil\u202etxt.exe")), "evil\\u202etxt.exe");
  assert.equal(shown(bytes("iso\u2066x\u2069")), "iso\\u2066x\\u2069");
  assert.equal(shown(bytes("ls\u2028ps\u2029")), "ls\\u2028ps\\u2029");
  assert.equal(shown(bytes("zw\u200bsp\ufeff")), "zw\\u200bsp\\ufeff");
  assert.equal(shown(bytes("alm\u061c")), "alm\\u061c");
  assert.equal(shown(bytes("soft\u00adhy")), "soft\\u00adhy");
  assert.equal(shown(bytes("fill\u3164")), "fill\\u3164");
  // A tag character (U+E0041, invisible text a model still reads) as its two UTF-16 halves.
  assert.equal(shown(bytes("tag\u{E0041}")), "tag\\udb40\\udc41");
  // A truncated sequence, a surrogate's CESU bytes and an overlong form are bytes, not characters.
  assert.equal(shown(bytes("cut", [0xc3])), "cut\\xc3");
  assert.equal(shown(bytes([0xed, 0xa0, 0x80])), "\\xed\\xa0\\x80");
  assert.equal(shown(bytes([0xc0, 0xaf])), "\\xc0\\xaf");
});

test("a valid UTF-8 name without a backslash or control character is unchanged", () => {
  const joined = ["family 👨\u200d👩.txt", "\u0645\u06cc\u200c\u0634\u0648\u062f.md"]; // ZWJ in emoji, ZWNJ in Persian
  for (const n of [
    "plain.txt",
    "café/naïve.md",
    "日本語.ts",
    "emoji 😀.txt",
    "U+DC80 \uFFFD.txt",
    "a b/c-d_e",
    ...joined,
  ]) {
    assert.equal(showName(n), n);
    assert.equal(osPath(n), n, "fs gets the string itself");
    assert.equal(parseShown(n), undefined, "nothing to read back");
  }
  // A real pair whose low half is in the escaped-byte range stays a character.
  const pair = "\uD800\uDC80.txt";
  assert.equal(showName(pair), pair);
  assert.equal(osPath(pair), pair);
});

test("the shown form of any bytes reads back to exactly those bytes (2,000 random names)", () => {
  let seed = 42;
  const rand = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) % n;
  // Pieces: ASCII that escapes or looks like an escape, characters that hide text (whole), and single
  // bytes that make valid UTF-8, cut sequences and stray continuation bytes when put side by side.
  const pieces = [
    [0x61],
    [0x5c],
    [0x0a],
    [0x09],
    [0x0d],
    [0x1b],
    [0x7f],
    [0x78],
    [0x75],
    [0xc2, 0x85], // NEL
    [0xc2, 0xad], // soft hyphen
    [0xe2, 0x80, 0xae], // RLO
    [0xe2, 0x80, 0xa8], // line separator
    [0xef, 0xbb, 0xbf], // BOM
    [0xf3, 0xa0, 0x81, 0x81], // tag A (U+E0041)
    [0xf0, 0x9f, 0x98, 0x80], // an emoji, shown as itself
    [0xc3, 0xa9], // é
    [0xc3],
    [0xa9],
    [0xff],
    [0xe2],
    [0x80],
    [0xed],
    [0xa0],
  ];
  const seen = new Map<string, string>();
  for (let i = 0; i < 2000; i++) {
    const b = Buffer.from(Array.from({ length: 1 + rand(8) }, () => pieces[rand(pieces.length)]).flat());
    const internal = bytesToInternal(b);
    const s = showName(internal);
    assert.ok(
      // eslint-disable-next-line no-control-regex -- no control or hiding character may be left in a shown name
      !/[\x00-\x1f\x7f-\x9f\xad\u2028-\u202e\ufeff]|\uDB40[\uDC00-\uDC7F]/.test(s),
      `one printable line: ${JSON.stringify(s)}`,
    );
    assert.ok(Buffer.from(s).toString("utf8") === s, "valid UTF-8");
    const back = s === internal ? internal : parseShown(s);
    assert.ok(back !== undefined, `reads back: ${s}`);
    assert.deepEqual(Buffer.from(osPath(back)), b, s);
    const other = seen.get(s);
    assert.ok(other === undefined || other === b.toString("hex"), `two names shown alike: ${s}`);
    seen.set(s, b.toString("hex"));
  }
  assert.ok(seen.size > 1000, `the names are varied: ${seen.size} distinct`); // 1,300 with this seed
});

test("only showName's exact form reads back; anything else is a literal name", () => {
  assert.equal(parseShown("a\\nb"), "a\nb");
  assert.equal(parseShown("\\\\"), "\\");
  assert.equal(parseShown("x\\x1b"), "x\x1b");
  assert.equal(parseShown("a\\x41"), undefined, "showName prints A, never \\x41");
  assert.equal(parseShown("a\\x0a"), undefined, "a newline is \\n");
  assert.equal(parseShown("caf\\xc3\\xa9"), undefined, "valid UTF-8 is never escaped");
  assert.equal(parseShown("bad\\xFF"), undefined, "hex is lowercase");
  assert.equal(parseShown("a\\q"), undefined);
  assert.equal(parseShown("nel\\u0085"), "nel\u0085");
  assert.equal(parseShown("x\\u00e9"), undefined, "é is shown as itself, never \\u00e9");
  assert.equal(parseShown("x\\u202E"), undefined, "hex is lowercase");
  assert.equal(parseShown("x\\udcff"), undefined, "a non-UTF-8 byte is \\xff, never a \\u escape");
  assert.equal(parseShown("x\\u008"), undefined, "four digits");
  assert.equal(parseShown("x\\udb40\\udc41"), "x\u{E0041}");
  assert.equal(parseShown("x\\udb40"), undefined, "half a tag is no character");
  assert.equal(parseShown("x\\ud83d\\ude00"), undefined, "an emoji is shown as itself");
  assert.equal(parseShown("trailing\\"), undefined);
  assert.deepEqual(osPath(parseShown("bad\\xff.txt")!), bytes("bad", [0xff], ".txt"));
});
