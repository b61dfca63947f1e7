// Review g62: rg takes its ignore rules from .gitignore files it opens by name, and reads some of them
// otherwise than latch: it follows a link (to a file outside, or one the rule hides), reads a hard
// link, and stops at a line that is not UTF-8. Its answer then left out exactly the files whose names
// were lines of another file: a yes/no on that file's lines, with nothing in the tree changing. Such
// a tree is searched by latch alone (src/browse/steady-tree.ts, gitignore.ts readIgnore). And below a
// chain of over 64 nested .gitignore files the tree is walked after rg all the same.
import assert from "node:assert/strict";
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import type { CallResult } from "../../src/host/types.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { rgChildren } from "./browse-fixture.js";

let fx: Fixture;
/** The file outside whose lines the attack guesses; one guess is right. */
const SECRET_LINES = "alpha\nsk-live-7f3a9\n";
const GUESSES = ["control", "sk-live-0000", "sk-live-7f3a9"];
const standStill = () => new Promise((r) => setTimeout(r, STEADY_MARGIN_MS + 200));
let deep = "deep";
/** Nested .gitignore files in the chain: past the 64 the walk after rg was once capped at. */
const CHAIN = 64 + 2;

before(async () => {
  fx = makeFixture("latch-ignore-reads-");
  const outside = path.join(fx.base, "outside.txt");
  writeFileSync(outside, SECRET_LINES);
  // One probe file per guess in each folder: rg would leave out those named by a line it took as a rule.
  for (const dir of ["link", "hard", "utf8"]) for (const g of GUESSES) fx.write({ [`${dir}/${g}`]: "PROBE\n" });
  symlinkSync(outside, path.join(fx.root, "link/.gitignore"));
  writeFileSync(path.join(fx.root, "lines.txt"), SECRET_LINES);
  fx.write({ "plain/a.txt": "alpha\n" });
  linkSync(path.join(fx.root, "lines.txt"), path.join(fx.root, "hard/.gitignore"));
  // rg stops at the line that is not UTF-8, so it takes no rule; latch read `sk-live-0000` as one.
  writeFileSync(path.join(fx.root, "utf8/.gitignore"), Buffer.from("#\xff\nsk-live-0000\n", "latin1"));
  for (let i = 0; i < CHAIN; i++) deep += "/d";
  mkdirSync(path.join(fx.root, deep), { recursive: true });
  for (let d = deep; d !== "."; d = path.dirname(d)) writeFileSync(path.join(fx.root, d, ".gitignore"), "*.log\n");
  writeFileSync(path.join(fx.root, deep, "end.txt"), "PROBE\n");
  await standStill(); // nothing below changes from here: only the .gitignore files can set rg's answer aside
});
after(() => fx.cleanup());

async function grep(args: object): Promise<{ result: { results: string }; by: string | undefined }> {
  const r: CallResult = await (await fx.host({ env: { LATCH_GREP_ENGINE: "rg" } })).call("grep", args);
  return {
    result: expectOk<{ results: string }>(r).result,
    by: (r as { display?: { engine: string } }).display?.engine,
  };
}

/** The probe files grep names under `dir`. */
const named = (results: string, dir: string) =>
  GUESSES.filter((g) => results.split("\n").some((l) => l.startsWith(`${dir}/${g}:`)));

test("attack: a .gitignore that is a link to a file outside: rg follows it, so latch searches alone", async () => {
  const { result, by } = await grep({ pattern: "PROBE", path: "link" });
  assert.equal(by, "js");
  // latch takes no rules from a link: every probe is there, whatever the outside file holds.
  assert.deepEqual(named(result.results, "link"), GUESSES);
});

test("attack: a .gitignore that is a hard link: its rules are not taken, and latch searches alone", async () => {
  const { result, by } = await grep({ pattern: "PROBE", path: "hard" });
  assert.equal(by, "js");
  assert.deepEqual(named(result.results, "hard"), GUESSES);
});

test("attack: a .gitignore that is not UTF-8: rg stops at that line, so latch searches alone", async () => {
  const { result, by } = await grep({ pattern: "PROBE", path: "utf8" });
  assert.equal(by, "js");
  // latch reads the file whole (the bad byte as U+FFFD), so its rule holds.
  assert.deepEqual(named(result.results, "utf8"), ["control", "sk-live-7f3a9"]);
});

test("a tree without such files keeps rg's answer", async () => {
  const { result, by } = await grep({ pattern: "alpha", path: "plain" });
  assert.equal(by, "rg");
  assert.equal(result.results, "plain/a.txt:1: alpha");
});

test("attack: below a chain of over 64 .gitignore files a folder that changed is seen after rg all the same", async () => {
  await standStill();
  // Only the deepest folder changes: the start stands still, so rg is asked, and only the walk after it
  // can see the change (no match is there to name it).
  writeFileSync(path.join(fx.root, deep, "new.txt"), "nothing\n");
  const { result, by } = await grep({ pattern: "PROBE", path: "deep" });
  assert.equal(by, "js");
  assert.equal(result.results, `${deep}/end.txt:1: PROBE`);
});

test("the attacks changed nothing outside or inside, and left no rg running", () => {
  assert.equal(readFileSync(path.join(fx.base, "outside.txt"), "utf8"), SECRET_LINES);
  assert.equal(readFileSync(path.join(fx.root, "lines.txt"), "utf8"), SECRET_LINES);
  for (const dir of ["link", "hard", "utf8"])
    for (const g of GUESSES) assert.equal(readFileSync(path.join(fx.root, dir, g), "utf8"), "PROBE\n");
  assert.deepEqual(rgChildren(), []);
});
