// The walk under every file operation (src/fs/beneath.ts): one folder at a time, no link followed,
// and acting through the folder's descriptor. On Linux a name resolves through /proc/self/fd; where
// /proc is missing (macOS) the fallback re-checks each folder's device and inode. Both are tried here
// (the fallback by turning /proc off for the test).
import assert from "node:assert/strict";
import {
  closeSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Refusal, ToolError } from "../../src/errors.js";
import { writeAtomic } from "../../src/fs/atomic-write.js";
import { tempWatch } from "../../src/fs/temp-names.js";
import { beneathMode, lstatBeneath, openFileBeneath, openFolder } from "../../src/fs/beneath.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { cannotExchange, startExchanger } from "../helpers/exchange-folders.js";
import { snapshot } from "./race-fixture.js";

/** Opens raced against the exchanger (more with LATCH_STRESS=1). */
const RACE_OPENS = process.env.LATCH_STRESS === "1" ? 200_000 : 20_000;

const PROC = beneathMode.proc;
let fx: Fixture;
let outside: string;

beforeEach(() => {
  fx = makeFixture("latch-beneath-");
  outside = path.join(fx.base, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "f"), "OUTSIDE\n");
  fx.write({ "d/f": "inside\n" });
  symlinkSync(outside, path.join(fx.root, "link"));
});
afterEach(() => {
  beneathMode.proc = PROC;
  fx.cleanup();
});

function readFd(fd: number): string {
  const buf = Buffer.alloc(100);
  const n = readSync(fd, buf);
  closeSync(fd);
  return buf.subarray(0, n).toString();
}

for (const proc of [true, false]) {
  describe(proc ? "through /proc/self/fd" : "the fallback without /proc", () => {
    beforeEach(() => {
      if (proc && !PROC) assert.fail("this Linux test needs /proc/self/fd");
      beneathMode.proc = proc;
    });

    test("a link on the way is refused by name, never followed", () => {
      assert.throws(
        () => openFolder(fx.root, "link"),
        (e: unknown) =>
          e instanceof Refusal && /The folder `link` changed while writing \(it is now a link\)/.test(e.reason),
      );
      assert.throws(() => openFileBeneath({ abs: path.join(fx.root, "link/f"), rel: "link/f" }), Refusal);
      assert.throws(() => lstatBeneath({ abs: path.join(fx.root, "link/f"), rel: "link/f" }), Refusal);
    });

    test("mkdir -p makes each folder through its parent, inside; a link in the way stops it", () => {
      const before = snapshot(outside);
      const made = openFolder(fx.root, "n/o/p", { create: true });
      made.close();
      assert.deepEqual(made.made, ["n", "n/o", "n/o/p"]);
      assert.ok(existsSync(path.join(fx.root, "n/o/p")));
      assert.throws(() => openFolder(fx.root, "link/q/r", { create: true }), Refusal);
      assert.deepEqual(snapshot(outside), before, "nothing made outside");
    });

    test("a file is read through its folder; a missing one is null", () => {
      assert.equal(readFd(openFileBeneath({ abs: path.join(fx.root, "d/f"), rel: "d/f" })!), "inside\n");
      assert.equal(openFileBeneath({ abs: path.join(fx.root, "d/none"), rel: "d/none" }), null);
      assert.equal(openFileBeneath({ abs: path.join(fx.root, "none/f"), rel: "none/f" }), null);
    });

    test("the tools work the same: write, read, move, delete, make a folder", async () => {
      const host = await fx.host();
      expectOk(await host.call("write_file", { path: "w/x/a.txt", content: "one\n" }));
      expectOk(await host.call("read_file", { path: "w/x/a.txt" }));
      expectOk(await host.call("edit_file", { path: "w/x/a.txt", old_string: "one", new_string: "two" }));
      expectOk(await host.call("move_file", { from: "w/x/a.txt", to: "w/y/b.txt" }));
      assert.equal(readFileSync(path.join(fx.root, "w/y/b.txt"), "utf8"), "two\n");
      expectOk(await host.call("delete_file", { path: "w/y/b.txt" }));
      expectOk(await host.call("create_directory", { path: "w/z/q" }));
      expectOk(await host.call("delete_file", { path: "w/z/q" }));
      assert.ok(!existsSync(path.join(fx.root, "w/y/b.txt")) && !existsSync(path.join(fx.root, "w/z/q")));
    });
  });
}

test("through /proc: a folder swapped after it was opened still gets the write, not the link's target", () => {
  if (!PROC) assert.fail("this Linux test needs /proc/self/fd");
  const dir = openFolder(fx.root, "d");
  try {
    renameSync(path.join(fx.root, "d"), path.join(fx.root, "d-moved"));
    symlinkSync(outside, path.join(fx.root, "d"));
    writeFileSync(dir.at("new"), "through the descriptor\n");
  } finally {
    dir.close();
  }
  assert.equal(readFileSync(path.join(fx.root, "d-moved/new"), "utf8"), "through the descriptor\n");
  assert.ok(!existsSync(path.join(outside, "new")));
});

test("the fallback: a folder swapped after it was opened fails the re-check", () => {
  beneathMode.proc = false;
  const dir = openFolder(fx.root, "d");
  try {
    renameSync(path.join(fx.root, "d"), path.join(fx.root, "d-moved"));
    symlinkSync(outside, path.join(fx.root, "d"));
    assert.throws(
      () => dir.check(),
      (e: unknown) => e instanceof Refusal && /it is now a link/.test(e.reason),
    );
  } finally {
    dir.close();
  }
});

for (const size of [16, (1 << 20) + 1]) {
  test(`the fallback: a folder swapped before the temp file's open refuses the write and keeps no descriptor (${size} bytes)`, async () => {
    beneathMode.proc = false;
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    // Between the temp file's naming and its open: the folder's name now leads to another folder.
    tempWatch.created = () => {
      renameSync(path.join(fx.root, "d"), path.join(fx.root, "d-moved"));
      mkdirSync(path.join(fx.root, "d"));
    };
    try {
      await assert.rejects(
        writeAtomic({ abs: path.join(fx.root, "d/f"), rel: "d/f" }, "x".repeat(size)),
        (e: unknown) => e instanceof Refusal,
      );
    } finally {
      tempWatch.created = undefined;
    }
    assert.equal(fds(), before, "every descriptor the write opened is closed");
    assert.equal(readFileSync(path.join(fx.root, "d-moved/f"), "utf8"), "inside\n");
  });
}

describe("a folder exchanged with a link while the walk opens it", () => {
  test("attack: the open's refusal names the folder, never latch's /proc path (review g60)", async (t) => {
    const why = cannotExchange();
    if (why) return assert.fail(why); // python3 is one of the suite's packages (.ci/run)
    // `d` and `link` trade places as fast as python can: an open that finds the link (ELOOP, or
    // ENOTDIR for O_DIRECTORY) may look again once `d` is a folder again.
    const racer = await startExchanger(path.join(fx.root, "d"), path.join(fx.root, "link"));
    const seen = new Map<string, number>();
    try {
      for (let i = 0; i < RACE_OPENS; i++) {
        try {
          openFolder(fx.root, "d").close();
          seen.set("opened", (seen.get("opened") ?? 0) + 1);
        } catch (err) {
          const message = (err as Error).message;
          assert.ok(err instanceof Refusal, `a changed folder is refused, not failed: ${message}`);
          assert.doesNotMatch(message, /\/proc\//);
          const said = /\(([^)]*)\)/.exec(message)?.[1] ?? message;
          seen.set(said, (seen.get(said) ?? 0) + 1);
        }
      }
    } finally {
      t.diagnostic(`${await racer.stop()} exchanges; ${JSON.stringify(Object.fromEntries(seen))}`);
    }
    assert.ok((seen.get("opened") ?? 0) > 0, "the folder opened between exchanges");
    assert.ok(seen.size > 1, "the race reached the open");
  });
});

test("a file where the path needs a folder: ENOTDIR, naming the path and what is there", () => {
  assert.throws(
    () => openFolder(fx.root, "d/f/g", { doing: "reading" }),
    (e: unknown) =>
      e instanceof ToolError &&
      e.code === "ENOTDIR" &&
      e.message.startsWith("`d/f` is not a folder (a file); nothing was read.") &&
      !e.message.includes("/proc/"),
  );
});
