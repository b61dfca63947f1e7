// write_file, edit_file and sed: read-before-write, exact matching, counts, CRLF, atomic results.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { PLACE } from "../../src/fs/owner.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import type { ErrorCode } from "../../src/errors.js";
import { expectError, expectOk, expectRefused } from "../helpers/expect.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const result = (out: CallResult) => expectOk(out).result;
const refusal = (out: CallResult, re: RegExp) => assert.match(expectRefused(out).reason, re);
const failure = (out: CallResult, code: ErrorCode, re?: RegExp) => {
  const e = expectError(out, code);
  if (re) assert.match(e.message, re);
};

let fx: Fixture;
let host: Host;
const file = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");
before(async () => {
  fx = makeFixture();
  host = await fx.host();
});
after(() => fx.cleanup());

describe("write_file", () => {
  test("creates a new file and its folders without a read, with a full result", async () => {
    const r = result(await host.call("write_file", { path: "new/deep/a.txt", content: "hello\n" }, { session: "w" }));
    assert.deepEqual(r, {
      path: "new/deep/a.txt",
      written: true,
      old_bytes: null,
      new_bytes: 6,
      old_sha256: null,
      new_sha256: sha("hello\n"),
      call_id: r.call_id, // what undo takes
    });
    assert.match(r.call_id, /^c[0-9a-z]{12,}$/);
    assert.equal(file("new/deep/a.txt"), "hello\n");
  });

  test("overwriting an existing file needs a full read in this session", async () => {
    fx.write({ "exist.txt": "old\n" });
    refusal(
      await host.call("write_file", { path: "exist.txt", content: "new\n" }, { session: "w" }),
      /not read it in this session/,
    );
    assert.equal(file("exist.txt"), "old\n");
    result(await host.call("read_file", { path: "exist.txt" }, { session: "other" }));
    refusal(await host.call("write_file", { path: "exist.txt", content: "new\n" }, { session: "w" }), /not read it/);
    result(await host.call("read_file", { path: "exist.txt" }, { session: "w" }));
    const r = result(await host.call("write_file", { path: "exist.txt", content: "new\n" }, { session: "w" }));
    assert.deepEqual([r.old_bytes, r.old_sha256, r.new_sha256], [4, sha("old\n"), sha("new\n")]);
    assert.equal(file("exist.txt"), "new\n");
  });

  test("a range read is not enough to overwrite the whole file", async () => {
    fx.write({ "partial.txt": "1\n2\n3\n" });
    result(await host.call("read_file_range", { path: "partial.txt", start_line: 1, end_line: 2 }, { session: "p" }));
    refusal(
      await host.call("write_file", { path: "partial.txt", content: "x\n" }, { session: "p" }),
      /needs a full read/,
    );
    assert.equal(file("partial.txt"), "1\n2\n3\n");
    // ... but a range read that covered every line is a full read.
    result(await host.call("read_file_range", { path: "partial.txt", start_line: 1 }, { session: "p" }));
    result(await host.call("write_file", { path: "partial.txt", content: "x\n" }, { session: "p" }));
  });

  test("a change by anyone since the read refuses the write (stale)", async () => {
    fx.write({ "stale.txt": "v1\n" });
    result(await host.call("read_file", { path: "stale.txt" }, { session: "s" }));
    writeFileSync(path.join(fx.root, "stale.txt"), "v2 by someone else\n");
    const out = await host.call("write_file", { path: "stale.txt", content: "v3\n" }, { session: "s" });
    refusal(out, /changed since you read it/);
    assert.match(expectRefused(out).hint ?? "", /Read it again, then retry/);
    assert.equal(file("stale.txt"), "v2 by someone else\n");
  });

  test("after its own write a session may write again; the marker moved to the new content", async () => {
    fx.write({ "mine.txt": "a\n" });
    result(await host.call("read_file", { path: "mine.txt" }, { session: "m" }));
    result(await host.call("write_file", { path: "mine.txt", content: "b\n" }, { session: "m" }));
    result(await host.call("write_file", { path: "mine.txt", content: "c\n" }, { session: "m" }));
    assert.equal(file("mine.txt"), "c\n");
  });

  test("keeps the file's mode, and leaves no temp file behind", async () => {
    fx.write({ "run.sh": "#!/bin/sh\necho hi\n" });
    chmodSync(path.join(fx.root, "run.sh"), 0o750);
    result(await host.call("read_file", { path: "run.sh" }, { session: "mode" }));
    result(await host.call("write_file", { path: "run.sh", content: "#!/bin/sh\necho bye\n" }, { session: "mode" }));
    assert.equal(statSync(path.join(fx.root, "run.sh")).mode & 0o777, 0o750);
    assert.deepEqual(
      readdirSync(fx.root).filter((n) => n.includes(".latch-")),
      [],
    );
  });

  test("a killed writer's temp file goes with this process's first write into its folder; a live or unverifiable writer's stays", async () => {
    const dead = Number(
      execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }),
    );
    const here = PLACE.slice(0, 4);
    const elsewhere = here === "ffff" ? "eeee" : "ffff"; // a writer in another pid namespace or machine
    fx.write({ "temps/x.txt": "x\n" });
    const temp = (pid: number, tag: string) =>
      path.join(fx.root, "temps", `.other.txt.latch-${pid}-${tag}89abcdef.tmp`);
    writeFileSync(temp(dead, here), "half of it");
    writeFileSync(temp(process.pid, here), "still being written");
    writeFileSync(temp(dead, elsewhere), "written in a sandbox, whose pids we cannot check");
    result(await host.call("write_file", { path: "temps/new.txt", content: "n\n" }, { session: "temps" }));
    assert.equal(existsSync(temp(dead, here)), false, "the dead writer's temp file is gone");
    assert.equal(existsSync(temp(process.pid, here)), true, "a running writer's temp file is left alone");
    assert.equal(existsSync(temp(dead, elsewhere)), true, "another place's temp file is left alone");
    rmSync(temp(process.pid, here));
    rmSync(temp(dead, elsewhere));
  });

  test("a killed writer's temp file of a name that is not UTF-8 or holds a newline goes too", async () => {
    const dead = Number(
      execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }),
    );
    const dir = path.join(fx.root, "odd-temps");
    mkdirSync(dir);
    const suffix = `.latch-${dead}-${PLACE.slice(0, 4)}89abcdef.tmp`;
    const left = [
      Buffer.concat([Buffer.from(".bad"), Buffer.from([0xff]), Buffer.from(".txt" + suffix)]),
      Buffer.from(".a\nb.txt" + suffix),
    ];
    for (const name of left) writeFileSync(Buffer.concat([Buffer.from(dir + "/"), name]), "half of it");
    assert.equal(readdirSync(dir).length, 2);
    result(await host.call("write_file", { path: "odd-temps/new.txt", content: "n\n" }, { session: "odd-temps" }));
    assert.deepEqual(readdirSync(dir), ["new.txt"], "both dead temp files are gone");
  });

  test("apply_patch of several files in one folder sweeps its dead temp files as write_file does", async () => {
    const dead = Number(
      execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }),
    );
    const dir = path.join(fx.root, "patched");
    mkdirSync(dir);
    const left = path.join(dir, `.old.txt.latch-${dead}-${PLACE.slice(0, 4)}89abcdef.tmp`);
    writeFileSync(left, "half of it");
    const patch = ["*** Begin Patch", "*** Add File: patched/a.txt", "+a", "*** Add File: patched/b.txt", "+b"];
    result(
      await host.call("apply_patch", { patch: [...patch, "*** End Patch", ""].join("\n") }, { session: "patched" }),
    );
    assert.deepEqual(readdirSync(dir).sort(), ["a.txt", "b.txt"], "the dead temp file is gone, both files written");
    assert.equal(file("patched/a.txt"), "a\n");
  });

  test("a folder is listed for dead temp files at most every 5 s: one left meanwhile goes at the next write after that", async (t) => {
    const dead = Number(
      execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }),
    );
    const dir = path.join(fx.root, "swept");
    mkdirSync(dir);
    t.mock.timers.enable({ apis: ["Date"], now: Date.now() });
    result(await host.call("write_file", { path: "swept/a.txt", content: "1\n" }, { session: "swept" }));
    const left = path.join(dir, `.b.txt.latch-${dead}-${PLACE.slice(0, 4)}89abcdef.tmp`);
    writeFileSync(left, "half of it"); // a writer killed after the folder's sweep
    t.mock.timers.tick(4_000);
    result(await host.call("write_file", { path: "swept/a.txt", content: "2\n" }, { session: "swept" }));
    assert.equal(existsSync(left), true, "4 s after the sweep the folder is not listed again");
    t.mock.timers.tick(1_000);
    result(await host.call("write_file", { path: "swept/a.txt", content: "3\n" }, { session: "swept" }));
    assert.equal(existsSync(left), false, "5 s after it, the next write sweeps the dead temp file");
    assert.deepEqual(readdirSync(dir), ["a.txt"]);
    assert.equal(file("swept/a.txt"), "3\n");
  });

  test("a pipe swapped in for a read file is refused at once, not waited on", async () => {
    fx.write({ "swap.txt": "text\n" });
    result(await host.call("read_file", { path: "swap.txt" }, { session: "fifo" }));
    rmSync(path.join(fx.root, "swap.txt"));
    execFileSync("mkfifo", [path.join(fx.root, "swap.txt")]);
    failure(
      await host.call("edit_file", { path: "swap.txt", old_string: "text", new_string: "x" }, { session: "fifo" }),
      "EISDIR",
      /not a regular file/,
    );
    failure(
      await host.call("write_file", { path: "swap.txt", content: "x" }, { session: "fifo" }),
      "EISDIR",
      /not a regular file/,
    );
    assert.ok(lstatSync(path.join(fx.root, "swap.txt")).isFIFO(), "the pipe is still there, untouched");
    assert.deepEqual(
      readdirSync(fx.root).filter((n) => n.includes("swap.txt.latch-")),
      [],
      "no temp file was left",
    );
  });

  test("a folder is not a file", async () => {
    fx.write({ "adir/x.txt": "x" });
    failure(await host.call("write_file", { path: "adir", content: "x" }), "EISDIR");
  });
});

describe("edit_file", () => {
  test("replaces exactly one occurrence, byte for byte", async () => {
    fx.write({ "e.ts": "const a = 1;\nconst b = 2;\n" });
    result(await host.call("read_file", { path: "e.ts" }, { session: "e" }));
    const r = result(
      await host.call(
        "edit_file",
        { path: "e.ts", old_string: "const b = 2;", new_string: "const b = 3;" },
        { session: "e" },
      ),
    );
    assert.deepEqual(r, {
      path: "e.ts",
      written: true,
      replacements: 1,
      old_bytes: 26,
      new_bytes: 26,
      old_sha256: sha("const a = 1;\nconst b = 2;\n"),
      new_sha256: sha("const a = 1;\nconst b = 3;\n"),
      call_id: r.call_id,
    });
    assert.equal(file("e.ts"), "const a = 1;\nconst b = 3;\n");
  });

  test("a range read is enough for an edit; no read at all is refused", async () => {
    fx.write({ "r.txt": "alpha\nbeta\ngamma\n" });
    refusal(
      await host.call("edit_file", { path: "r.txt", old_string: "beta", new_string: "BETA" }, { session: "r" }),
      /not read it/,
    );
    result(await host.call("read_file_range", { path: "r.txt", start_line: 2, end_line: 2 }, { session: "r" }));
    result(await host.call("edit_file", { path: "r.txt", old_string: "beta", new_string: "BETA" }, { session: "r" }));
    assert.equal(file("r.txt"), "alpha\nBETA\ngamma\n");
  });

  test("no match: file untouched, and the error quotes the closest lines with numbers", async () => {
    fx.write({ "n.py": "def f():\n    return 1\n\ndef g(x):\n    return x * 2\n" });
    result(await host.call("read_file", { path: "n.py" }, { session: "n" }));
    const out = await host.call(
      "edit_file",
      { path: "n.py", old_string: "def g(y):\n    return y * 2", new_string: "def g(y):\n    return y" },
      { session: "n" },
    );
    failure(out, "ENOMATCH", /the file is unchanged/);
    const msg = expectError(out).message;
    assert.match(msg, /closest lines/);
    assert.match(msg, /\s4: def g\(x\):/);
    assert.equal(file("n.py"), "def f():\n    return 1\n\ndef g(x):\n    return x * 2\n");
  });

  test("several matches: an ECOUNT error (like sed's) with the count and their lines, unless replace_all", async () => {
    fx.write({ "m.txt": "x = 1\ny = 1\nx = 1\n" });
    result(await host.call("read_file", { path: "m.txt" }, { session: "mm" }));
    failure(
      await host.call("edit_file", { path: "m.txt", old_string: "x = 1", new_string: "x = 2" }, { session: "mm" }),
      "ECOUNT",
      /occurs 2 times .*lines 1, 3/,
    );
    assert.equal(file("m.txt"), "x = 1\ny = 1\nx = 1\n");
    const r = result(
      await host.call(
        "edit_file",
        { path: "m.txt", old_string: "x = 1", new_string: "x = 2", replace_all: true },
        { session: "mm" },
      ),
    );
    assert.equal(r.replacements, 2);
    assert.equal(file("m.txt"), "x = 2\ny = 1\nx = 2\n");
  });

  test("a CRLF file stays CRLF when the model sends LF", async () => {
    fx.write({ "w.txt": "one\r\ntwo\r\nthree\r\n" });
    result(await host.call("read_file", { path: "w.txt" }, { session: "crlf" }));
    result(
      await host.call(
        "edit_file",
        { path: "w.txt", old_string: "one\ntwo", new_string: "one\nTWO\nand a half" },
        { session: "crlf" },
      ),
    );
    assert.equal(file("w.txt"), "one\r\nTWO\r\nand a half\r\nthree\r\n");
  });

  test("old_string equal to new_string, or empty, is an error naming the fix", async () => {
    fx.write({ "same.txt": "s\n" });
    result(await host.call("read_file", { path: "same.txt" }, { session: "same" }));
    failure(
      await host.call("edit_file", { path: "same.txt", old_string: "s", new_string: "s" }, { session: "same" }),
      "EINVAL",
      /the same/,
    );
    failure(
      await host.call("edit_file", { path: "same.txt", old_string: "", new_string: "s" }, { session: "same" }),
      "EINVAL",
      /old_string.*at least 1 character/,
    );
  });

  test("a missing file is ENOENT and nothing is created", async () => {
    failure(
      await host.call("edit_file", { path: "ghost.txt", old_string: "a", new_string: "b" }),
      "ENOENT",
      /write_file/,
    );
    assert.equal(existsSync(path.join(fx.root, "ghost.txt")), false);
  });

  test("a file that is not valid UTF-8 is refused rather than re-encoded", async () => {
    writeFileSync(
      path.join(fx.root, "latin1.txt"),
      Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" ok\n".repeat(20))]),
    );
    result(await host.call("read_file", { path: "latin1.txt" }, { session: "l1" }));
    refusal(
      await host.call(
        "edit_file",
        { path: "latin1.txt", old_string: "ok", new_string: "OK", replace_all: true },
        { session: "l1" },
      ),
      /not valid UTF-8/,
    );
    assert.equal(readFileSync(path.join(fx.root, "latin1.txt"))[3], 0xe9);
  });
});

describe("sed", () => {
  test("exactly one match by default; another count changes nothing and says the count", async () => {
    fx.write({ "s.txt": "foo\nbar foo\nbaz\n" });
    result(await host.call("read_file", { path: "s.txt" }, { session: "sed" }));
    failure(
      await host.call("sed", { path: "s.txt", pattern: "foo", replacement: "qux" }, { session: "sed" }),
      "ECOUNT",
      /Found 2 occurrences of pattern.*expected 1/,
    );
    assert.equal(file("s.txt"), "foo\nbar foo\nbaz\n");
    const r = result(await host.call("sed", { path: "s.txt", pattern: "baz", replacement: "BAZ" }, { session: "sed" }));
    assert.deepEqual([r.replacements, r.changed], [1, true]);
    assert.equal(file("s.txt"), "foo\nbar foo\nBAZ\n");
  });

  test("a line range limits where it looks", async () => {
    fx.write({ "range.txt": "a=1\na=1\na=1\na=1\n" });
    result(await host.call("read_file", { path: "range.txt" }, { session: "rg" }));
    const r = result(
      await host.call(
        "sed",
        { path: "range.txt", pattern: "a=1", replacement: "a=2", all: true, start_line: 2, end_line: 3 },
        { session: "rg" },
      ),
    );
    assert.equal(r.replacements, 2);
    assert.equal(file("range.txt"), "a=1\na=2\na=2\na=1\n");
  });

  test("expect_replacements: a wrong count leaves the file unchanged; the right one replaces them all", async () => {
    fx.write({ "x.txt": "k k k\n" });
    result(await host.call("read_file", { path: "x.txt" }, { session: "xr" }));
    failure(
      await host.call(
        "sed",
        { path: "x.txt", pattern: "k", replacement: "j", expect_replacements: 2 },
        { session: "xr" },
      ),
      "ECOUNT",
      /Found 3 occurrences.*expected 2/,
    );
    assert.equal(file("x.txt"), "k k k\n");
    const r = result(
      await host.call(
        "sed",
        { path: "x.txt", pattern: "k", replacement: "j", expect_replacements: 3 },
        { session: "xr" },
      ),
    );
    assert.deepEqual([r.replacements, r.changed], [3, true]);
    assert.equal(file("x.txt"), "j j j\n");
  });

  test("the pattern is plain text, not a regular expression", async () => {
    fx.write({ "re.txt": "a.c abc\n" });
    result(await host.call("read_file", { path: "re.txt" }, { session: "re" }));
    result(await host.call("sed", { path: "re.txt", pattern: "a.c", replacement: "X" }, { session: "re" }));
    assert.equal(file("re.txt"), "X abc\n");
  });

  test("all with no match reports changed: false and writes nothing", async () => {
    fx.write({ "none.txt": "nothing here\n" });
    result(await host.call("read_file", { path: "none.txt" }, { session: "none" }));
    const before = statSync(path.join(fx.root, "none.txt")).mtimeMs;
    const r = result(
      await host.call("sed", { path: "none.txt", pattern: "zzz", replacement: "y", all: true }, { session: "none" }),
    );
    assert.deepEqual([r.replacements, r.changed, r.written], [0, false, false]);
    assert.equal(statSync(path.join(fx.root, "none.txt")).mtimeMs, before);
  });

  test("a start_line past the end is ERANGE", async () => {
    fx.write({ "short.txt": "1\n2\n" });
    result(await host.call("read_file", { path: "short.txt" }, { session: "short" }));
    failure(
      await host.call(
        "sed",
        { path: "short.txt", pattern: "1", replacement: "2", start_line: 9 },
        { session: "short" },
      ),
      "ERANGE",
    );
  });
});
