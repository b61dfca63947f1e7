// removeBeneath (src/fs/remove-beneath.ts), tried as a background process in the box would try it: the
// control guard removes what a contained process made while that process may still run, so a folder
// on the way can be swapped for a link to somewhere outside between the check and the removal. Each
// test checks the disk outside the root: nothing there is ever removed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { errnoCode, Refusal } from "../../src/errors.js";
import { bytesToInternal } from "../../src/fs/names.js";
import { removeBeneath } from "../../src/fs/remove-beneath.js";
import { makeFixture } from "../helpers/fixture.js";
import { stressCount } from "../helpers/stress.js";

const fx = makeFixture("latch-remove-beneath-");
after(() => fx.cleanup());
let n = 0;

/** A fresh root and an outside folder holding a file and a `.git` with a config, as a victim. */
function place(): { root: string; outside: string } {
  const base = path.join(fx.base, `case-${n++}`);
  const root = path.join(base, "ws");
  const outside = path.join(base, "outside");
  mkdirSync(path.join(outside, ".git"), { recursive: true });
  writeFileSync(path.join(outside, "keep.txt"), "the user's\n");
  writeFileSync(path.join(outside, ".git/config"), "[core]\n");
  mkdirSync(root, { recursive: true });
  return { root, outside };
}

function intact(outside: string): void {
  assert.equal(readFileSync(path.join(outside, "keep.txt"), "utf8"), "the user's\n");
  assert.equal(readFileSync(path.join(outside, ".git/config"), "utf8"), "[core]\n");
}

test("a link on the way to what is removed is refused, and nothing outside is removed", () => {
  const { root, outside } = place();
  symlinkSync(outside, path.join(root, "sub"));
  assert.throws(() => removeBeneath(root, path.join(root, "sub/.git")), /changed while deleting \(it is now a link\)/);
  intact(outside);
});

test("a link removed is the link: what it leads to stays", () => {
  const { root, outside } = place();
  symlinkSync(outside, path.join(root, "l"));
  removeBeneath(root, path.join(root, "l"));
  assert.equal(existsSync(path.join(root, "l")), false);
  intact(outside);
});

test("a folder holding links to outside goes, with the links, and what they lead to stays", () => {
  const { root, outside } = place();
  mkdirSync(path.join(root, "d/sub/deeper"), { recursive: true });
  writeFileSync(path.join(root, "d/f"), "x");
  symlinkSync(outside, path.join(root, "d/l"));
  symlinkSync(path.join(outside, "keep.txt"), path.join(root, "d/sub/deeper/l2"));
  const odd = Buffer.concat([Buffer.from(path.join(root, "d/sub") + "/"), Buffer.from([0xff])]);
  mkdirSync(odd);
  writeFileSync(Buffer.concat([odd, Buffer.from("/.envrc")]), "x");
  removeBeneath(root, path.join(root, "d"));
  assert.deepEqual(readdirSync(root), []);
  intact(outside);
});

test("a name that is not UTF-8, as latch holds it, is removed", () => {
  const { root, outside } = place();
  const odd = Buffer.concat([Buffer.from(root + "/"), Buffer.from([0xff])]);
  mkdirSync(Buffer.concat([odd, Buffer.from("/r/.git")]), { recursive: true });
  removeBeneath(root, path.join(root, bytesToInternal(Buffer.from([0xff]))));
  assert.deepEqual(readdirSync(root), []);
  intact(outside);
});

test("a chain 300 folders deep, with files beside it at every level, goes whole; a missing entry is false", () => {
  const { root, outside } = place();
  // A process pads what the guard must remove with a chain deeper than the descriptors held at once.
  let d = path.join(root, ".vscode");
  mkdirSync(d);
  for (let i = 0; i < 300; i++) {
    writeFileSync(path.join(d, "tasks.json"), "{}");
    symlinkSync(outside, path.join(d, "out"));
    d = path.join(d, "z");
    mkdirSync(d);
  }
  assert.deepEqual(removeBeneath(root, path.join(root, ".vscode")), { done: "removed" });
  assert.deepEqual(readdirSync(root), []); // nothing moved up is left behind
  assert.deepEqual(removeBeneath(root, path.join(root, ".vscode")), { done: "gone" });
  intact(outside);
});

test("a path outside the root is refused before anything is touched", () => {
  const { root, outside } = place();
  assert.throws(() => removeBeneath(root, outside), /is not below/);
  assert.throws(() => removeBeneath(root, root), /is not below/);
  intact(outside);
});

// npm test: 300 removals against a process that swaps the folder for a link all the while; a removal
// by path (rmSync) lost the outside `.git` within the first hundred here. test:stress: 5,000.
const RACES = stressCount(300, 5000, "LATCH_REMOVE_RACES");

test(`a folder swapped for a link to outside while its .git is removed, ${RACES} times: nothing outside goes`, async () => {
  const { root, outside } = place();
  const real = path.join(root, "d.real");
  const link = path.join(root, "d.link");
  mkdirSync(path.join(real, ".git/objects"), { recursive: true });
  symlinkSync(outside, link);
  // The swapper: `d` is the real folder one instant and the link the next (renames are atomic).
  const swapper = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("fs"); const [real, link, d] = process.argv.slice(1);
       let said = false;
       for (;;) { try { fs.renameSync(real, d); fs.renameSync(d, real); fs.renameSync(link, d); fs.renameSync(d, link);
         if (!said) said = process.stdout.write("swapping\\n"); } catch {} }`,
      real,
      link,
      path.join(root, "d"),
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  try {
    // Not one removal before the swaps run (the process takes ~100 ms to start).
    await new Promise<void>((resolve, reject) => {
      swapper.stdout.once("data", () => resolve());
      swapper.once("exit", (code) => reject(new Error(`the swapper ended (${code})`)));
    });
    let removed = 0;
    let refused = 0;
    // RACES rounds, and on until both ways were seen (at most ten times as many): on a loaded machine
    // the swapper won all 300 rounds of the fresh-clone suite once (2026-12-06).
    for (let i = 0; i < RACES || ((removed === 0 || refused === 0) && i < RACES * 10); i++) {
      try {
        if (removeBeneath(root, path.join(root, "d/.git")).done === "removed") removed++;
      } catch (err) {
        // The folder changed on the way (it is a link now), or is mid-swap: nothing removed.
        if (!(err instanceof Refusal) && !["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) throw err;
        refused++;
      }
      // The real folder's .git comes back for the next round, made through its own name (the link
      // never moves there: that name is the real folder or nothing).
      try {
        if (lstatSync(real).isDirectory()) mkdirSync(path.join(real, ".git/objects"), { recursive: true });
      } catch {
        // at `d` just now
      }
      intact(outside);
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    // Both ways happened: some removals ran into the link, and some removed the real .git.
    assert.ok(removed > 0 && refused > 0, `removed ${removed}, refused ${refused}`);
  } finally {
    swapper.kill("SIGKILL");
  }
  intact(outside);
});
