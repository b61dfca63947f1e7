// realpathOf (src/fs/realpath.ts): the kernel's lookup (open with O_PATH, then /proc/self/fd) must
// answer as realpath(3) does, path for path and error for error, on what a model's shell can make:
// links with `..` after another link, loops, chains, names that are not UTF-8, a FIFO (which an open
// for reading would block on), a file with a slash after it. glibc's realpath(3) is the reference here.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { bytesToInternal, fromOsPath, osPath } from "../../src/fs/names.js";
import { realpathOf } from "../../src/fs/realpath.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-realpath-");
after(() => fx.cleanup());

/** realpath(3) of the same path, in latch's form, or its error code. */
function reference(p: string): string {
  try {
    return fromOsPath(realpathSync.native(osPath(p), { encoding: "buffer" }));
  } catch (err) {
    return `error ${(err as NodeJS.ErrnoException).code}`;
  }
}

function ours(p: string): string {
  try {
    return realpathOf(p);
  } catch (err) {
    return `error ${(err as NodeJS.ErrnoException).code}`;
  }
}

test("realpathOf answers as realpath(3), path for path and error for error", () => {
  const w = realpathSync(fx.root);
  const at = (rel: string) => path.join(w, rel);
  mkdirSync(at("d/sub"), { recursive: true });
  writeFileSync(at("d/f"), "x");
  symlinkSync("d", at("toD"));
  symlinkSync(at("d/f"), at("absF"));
  symlinkSync("q/f", at("f1")); // f1 -> q/f, q -> sub2/.., sub2 -> d/sub: `..` from where sub2 really is
  symlinkSync("sub2/..", at("q"));
  symlinkSync("d/sub", at("sub2"));
  symlinkSync("loopB", at("loopA"));
  symlinkSync("loopA", at("loopB"));
  symlinkSync("nowhere", at("dangling"));
  execFileSync("mkfifo", [at("d/fifo")]);
  const odd = bytesToInternal(Buffer.from([0xff]));
  mkdirSync(osPath(at(odd)));
  writeFileSync(osPath(at(`${odd}/g`)), "y");
  symlinkSync(osPath(at(`${odd}/g`)), at("toOdd"));
  const cases = [
    "d",
    "d/f",
    "toD/f",
    "toD/sub/../f",
    "absF",
    "f1",
    "q",
    "loopA",
    "dangling",
    "missing",
    "d/f/",
    "d/f/x",
    "d/fifo",
    odd,
    `${odd}/g`,
    "toOdd",
    ".",
  ];
  for (const rel of cases) assert.equal(ours(at(rel)), reference(at(rel)), rel);
  assert.equal(ours(at("toOdd")), at(`${odd}/g`)); // the name held as latch holds it
});
