// The streamed edit_file path (src/edit/mutate-stream.ts) for files over 8 MiB: the same answers
// as the in-memory path on the same inputs (a property over random texts, needles and tiny chunks),
// its refusals, CRLF, a multi-byte needle cut by a chunk edge, a file changed under the edit, a full
// disk, the whole read_file_range → edit_file cycle on a 9 MiB file, and flat memory on a 100 MB file.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import { Refusal, ToolError } from "../../src/errors.js";
import editFile from "../../src/tools/edit_file.js";
import { Ledger } from "../../src/fs/ledger.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { replaceStreamed, STREAM_EDIT_ABOVE } from "../../src/edit/mutate-stream.js";
import type { MutationContext } from "../../src/edit/mutate.js";
import { resolvePath } from "../../src/fs/paths.js";
import { summaryOf } from "../../src/edit/replace.js";
import { makeFixture } from "../helpers/fixture.js";
import { callTool, makeToolEnv, type Outcome } from "../shell/tool-env.js";
import { expectError, expectOk, expectRefused } from "../helpers/expect.js";

const sha = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");
const fx = makeFixture("latch-stream-edit-");
const ledger = new Ledger(path.join(fx.base, "ledger.db"));
after(() => {
  ledger.close();
  fx.cleanup();
});
const locksDir = path.join(fx.base, "locks");
mkdirSync(locksDir);
// Two workspaces with the same file name, so both paths give the same messages.
const memRoot = path.join(fx.base, "mem");
const streamRoot = path.join(fx.base, "stream");
mkdirSync(memRoot);
mkdirSync(streamRoot);
const ctx = (root: string, session = "s"): MutationContext => ({ root, locksDir, ledger, session });
const target = (root: string, rel = "f.txt") =>
  resolvePath({ root, controlPlane: [], deniedSubstrings: [] }, rel, { forWrite: true });

interface Edit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** The in-memory path: edit_file itself, on a file far under the threshold. */
async function inMemory(content: Buffer, e: Edit): Promise<{ out: Outcome; disk: Buffer }> {
  writeFileSync(path.join(memRoot, "f.txt"), content);
  ledger.record("s", path.join(memRoot, "f.txt"), sha(content), "range");
  const env = { ...makeToolEnv({ root: memRoot }), session: "s", ledger, mutation: ctx(memRoot) };
  const out = await callTool(editFile, { path: "f.txt", ...e }, env);
  return { out, disk: readFileSync(path.join(memRoot, "f.txt")) };
}

async function streamed(
  content: Buffer,
  e: Edit,
  chunkBytes: number,
  session = "s",
): Promise<{ out: Outcome; disk: Buffer }> {
  const abs = path.join(streamRoot, "f.txt");
  writeFileSync(abs, content);
  if (session === "s") ledger.record("s", abs, sha(content), "range");
  const t = await target(streamRoot);
  let out: Outcome;
  try {
    const r = await replaceStreamed(
      ctx(streamRoot, session),
      { target: t, find: e.old_string, replace: e.new_string, all: e.replace_all === true },
      { chunkBytes },
    );
    out = { status: "ok", result: { ...summaryOf(t, r.before, r.after, r.written), replacements: r.replacements } };
  } catch (err) {
    if (err instanceof Refusal) out = { status: "refused", reason: err.reason, hint: err.hint };
    else if (err instanceof ToolError) out = { status: "error", code: err.code, message: err.message };
    else throw err;
  }
  // Every call, refused or not, leaves the folder as it found it: the file and nothing else (no temp file).
  assert.deepEqual(readdirSync(streamRoot), ["f.txt"], `after ${JSON.stringify(e)}`);
  return { out, disk: readFileSync(abs) };
}

/** Equal outcomes; a no-match differs only in its hint (closest lines in memory, grep when streamed). */
function assertSame(a: Outcome, b: Outcome, why: string): void {
  const norm = (o: Outcome) =>
    o.status === "error" && o.code === "ENOMATCH" ? { ...o, message: o.message.split("\n")[0] } : o;
  assert.deepEqual(norm(b), norm(a), why);
}

describe("streamed edit_file", () => {
  test("property: the same result and the same bytes on disk as the in-memory path", async () => {
    const piece = fc.constantFrom("a", "b", "ab", " ", "\n", "\r\n", "\r", "é", "€", "😀", "x\n");
    // Now and then a byte sequence that is not UTF-8 (a cut character, a stray continuation, an overlong
    // form, a surrogate): both paths must refuse the same files.
    const bad = fc.constantFrom([0xe2, 0x82], [0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff], [0xf0, 0x9f, 0x98]);
    const bytes = fc.array(
      fc.oneof(
        { weight: 80, arbitrary: piece.map((p) => Buffer.from(p)) },
        { weight: 1, arbitrary: bad.map((b) => Buffer.from(b)) },
      ),
      { maxLength: 40 },
    );
    const text = bytes.map((b) => Buffer.concat(b).toString("latin1"));
    const needleOf = (raw: string) => {
      const t = [...Buffer.from(raw, "latin1").toString("utf8")];
      return fc.oneof(
        fc.tuple(fc.nat(), fc.integer({ min: 1, max: 8 })).map(([i, n]) =>
          t
            .slice(i % Math.max(1, t.length))
            .slice(0, n)
            .join(""),
        ),
        fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join("")),
      );
    };
    const cases = text.chain((t) =>
      fc.record({
        text: fc.constant(t),
        find: needleOf(t),
        replace: fc.array(piece, { maxLength: 4 }).map((p) => p.join("")),
        all: fc.boolean(),
        chunk: fc.integer({ min: 1, max: 17 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        fc.pre(c.find !== "" && c.find !== c.replace);
        const e = { old_string: c.find, new_string: c.replace, replace_all: c.all };
        const content = Buffer.from(c.text, "latin1");
        const m = await inMemory(content, e);
        const s = await streamed(content, e, c.chunk);
        assertSame(m.out, s.out, JSON.stringify(c));
        assert.deepEqual(s.disk, m.disk, JSON.stringify(c));
      }),
      { numRuns: 400 },
    );
  });

  test("refuses a file not read in this session, and one changed since it was read", async () => {
    const e = { old_string: "two", new_string: "2" };
    const content = Buffer.from("one\ntwo\nthree\n");
    const fresh = await streamed(content, e, 4, "never-read");
    assert.match(expectRefused(fresh.out).reason, /you have not read it in this session; nothing was written/);
    assert.deepEqual(fresh.disk, content);

    // Read one version, then someone else changes the file: the session's marker no longer matches.
    const abs = path.join(streamRoot, "f.txt");
    const t = await target(streamRoot);
    ledger.record("s2", abs, sha(content), "range");
    writeFileSync(abs, "one\ntwo\nthree\nfour\n");
    await assert.rejects(
      replaceStreamed(ctx(streamRoot, "s2"), { target: t, find: "two", replace: "2", all: false }, { chunkBytes: 4 }),
      (err: Refusal) => {
        assert.match(err.reason, /changed since you read it; nothing was written/);
        return true;
      },
    );
    assert.equal(readFileSync(abs, "utf8"), "one\ntwo\nthree\nfour\n");
  });

  test("attack: a small file swapped for a large one for edit_file's size look is refused, not streamed (g67)", async () => {
    // edit_file takes the streamed path by an lstat before the lock (isLargeFile); a process that
    // exchanged the file with a 9 MiB one for that look, and back, took a small file onto the path
    // that checks the file's times but not its bytes before the rename (mutate()'s re-read). The
    // file pinned under the lock must still be over the threshold.
    const content = Buffer.from("one\ntwo\nthree\n");
    const abs = path.join(streamRoot, "f.txt");
    writeFileSync(abs, content);
    ledger.record("s", abs, sha(content), "range");
    const t = await target(streamRoot);
    await assert.rejects(
      replaceStreamed(
        ctx(streamRoot),
        { target: t, find: "two", replace: "2", all: false },
        { above: STREAM_EDIT_ABOVE },
      ),
      (err: Refusal) => {
        assert.match(
          err.reason,
          /changed since you read it \(its size crossed 8.0 MiB while this write ran\); nothing was written/,
        );
        assert.equal(err.hint, "Read it again, then retry.");
        return true;
      },
    );
    assert.deepEqual(readFileSync(abs), content, "nothing written");
    assert.deepEqual(readdirSync(streamRoot), ["f.txt"], "no temp file");
  });

  test("several occurrences are an ECOUNT error with their count and lines; no match says where to look", async () => {
    const content = Buffer.from("x\nneedle\ny\nz needle\nneedle\n");
    const many = await streamed(content, { old_string: "needle", new_string: "pin" }, 3);
    assert.equal(expectError(many.out).code, "ECOUNT");
    assert.match(
      expectError(many.out).message,
      /old_string occurs 3 times in `f.txt` \(at lines 2, 4, 5\); the file is unchanged/,
    );
    assert.deepEqual(many.disk, content);
    const none = await streamed(content, { old_string: "haystack", new_string: "pin" }, 3);
    assert.equal(expectError(none.out).code, "ENOMATCH");
    assert.match(expectError(none.out).message, /too large for a closest-lines hint: find the text with grep/);
    assert.deepEqual(none.disk, content);
    const all = await streamed(content, { old_string: "needle", new_string: "pin", replace_all: true }, 3);
    assert.equal(all.out.status, "ok");
    assert.equal(expectOk<{ replacements: number }>(all.out).result.replacements, 3);
    assert.equal(all.disk.toString(), "x\npin\ny\nz pin\npin\n");
  });

  test("a CRLF file: an LF needle matches its CRLF form and the replacement is written CRLF", async () => {
    const content = Buffer.from("alpha\r\nbeta\r\ngamma\r\n");
    const r = await streamed(content, { old_string: "alpha\nbeta", new_string: "one\ntwo\nthree" }, 5);
    assert.equal(r.out.status, "ok", JSON.stringify(r.out));
    assert.equal(r.disk.toString(), "one\r\ntwo\r\nthree\r\ngamma\r\n");
    // Half the line breaks CRLF still counts as a CRLF file (usesCrlf's rule), a chunk edge inside "\r\n".
    const mixed = Buffer.from("x\r\ny\nz");
    const e = { old_string: "x\ny", new_string: "1\n2" };
    const m = await inMemory(mixed, e);
    const s = await streamed(mixed, e, 2);
    assert.equal(s.disk.toString(), "1\r\n2\nz");
    assertSame(m.out, s.out, "half CRLF");
    assert.deepEqual(s.disk, m.disk);
  });

  test("a multi-byte needle cut by a chunk edge is found, and the text around it kept byte for byte", async () => {
    // "€" is e2 82 ac and "😀" f0 9f 98 80: with 5-byte chunks both straddle an edge.
    const content = Buffer.from("abcd€😀 tail €\n");
    const r = await streamed(content, { old_string: "€😀", new_string: "EUR-smile" }, 5);
    assert.equal(r.out.status, "ok", JSON.stringify(r.out));
    assert.equal(r.disk.toString(), "abcdEUR-smile tail €\n");
    for (const chunk of [1, 2, 3, 4, 6, 7]) {
      const again = await streamed(content, { old_string: "€😀", new_string: "EUR-smile" }, chunk);
      assert.equal(again.disk.toString(), "abcdEUR-smile tail €\n", `chunk ${chunk}`);
    }
  });

  test("invalid UTF-8 is refused as in memory, even when the bad byte ends a chunk", async () => {
    const content = Buffer.concat([Buffer.from("abc"), Buffer.from([0xe2, 0x82]), Buffer.from("abc\n")]);
    const m = await inMemory(content, { old_string: "abc\n", new_string: "x" });
    const s = await streamed(content, { old_string: "abc\n", new_string: "x" }, 4);
    assert.equal(s.out.status, "refused");
    assertSame(m.out, s.out, "invalid UTF-8");
    assert.deepEqual(s.disk, content);
  });

  test("a file replaced between hashing and writing is left as the other writer made it, with no temp file", async () => {
    const abs = path.join(streamRoot, "f.txt");
    const content = Buffer.from("keep\nedit me\nkeep\n");
    writeFileSync(abs, content);
    ledger.record("s", abs, sha(content), "range");
    const t = await target(streamRoot);
    const cases: [string, () => void, string][] = [
      [
        "rewritten in place (pass 2 hashes differently)",
        () => writeFileSync(abs, "keep\nedit me\nKEEP\n"),
        "keep\nedit me\nKEEP\n",
      ],
      [
        "replaced by a rename (another inode)",
        () => (writeFileSync(abs + ".new", "other\n"), renameSync(abs + ".new", abs)),
        "other\n",
      ],
    ];
    for (const [name, change, left] of cases) {
      writeFileSync(abs, content);
      const edit = replaceStreamed(
        ctx(streamRoot),
        { target: t, find: "edit me", replace: "edited", all: false },
        { chunkBytes: 4, afterSurvey: async () => change() },
      );
      await assert.rejects(edit, (err: ToolError) => {
        assert.equal(err.code, "ESTALE", name);
        assert.match(err.message, /changed while latch was rewriting it; nothing was changed by this edit/);
        return true;
      });
      assert.equal(readFileSync(abs, "utf8"), left, name);
      assert.deepEqual(readdirSync(streamRoot), ["f.txt"], `${name}: no temp file left`);
    }
  });
});

test("a full disk during a streamed edit: the old content survives, no temp file, the error says the disk is full", async () => {
  const small = path.join(fx.base, "small");
  after(mountTmpfs(small, "size=1m"));
  const old = "old line\n".repeat(60_000); // 540 KB: a second copy does not fit
  writeFileSync(path.join(small, "f.txt"), old);
  ledger.record("s", path.join(small, "f.txt"), sha(old), "range");
  const t = await target(small);
  await assert.rejects(
    replaceStreamed(
      ctx(small),
      { target: t, find: "old line\n", replace: "a longer replacement line\n", all: true },
      { chunkBytes: 4096 },
    ),
    (err: ToolError) => {
      assert.equal(err.code, "ENOSPC");
      assert.match(err.message, /disk is full; nothing was changed: `f.txt` still holds its old content/);
      return true;
    },
  );
  assert.equal(readFileSync(path.join(small, "f.txt"), "utf8"), old);
  assert.deepEqual(readdirSync(small), ["f.txt"], "no temp file left behind");
});

describe("edit_file on a file over the threshold, through the host", () => {
  test("read_file_range of part of a 9 MiB file allows edit_file; the marker moves to the new content", async () => {
    const line = (i: number) => `line ${String(i).padStart(8, "0")} ${"-".repeat(50)}\n`;
    const lines = Math.ceil((STREAM_EDIT_ABOVE + (1 << 20)) / line(0).length);
    const fd = openSync(path.join(fx.root, "big.log"), "w");
    for (let i = 1; i <= lines; i += 10_000)
      writeSync(fd, Array.from({ length: Math.min(10_000, lines - i + 1) }, (_, k) => line(i + k)).join(""));
    closeSync(fd);
    const host = await fx.host();
    const mid = Math.floor(lines / 2);
    const edit = { path: "big.log", old_string: line(mid), new_string: "EDITED\n" };
    const unread = await host.call("edit_file", edit, { session: "big" });
    assert.equal(unread.status, "refused", JSON.stringify(unread).slice(0, 300));
    const r = await host.call(
      "read_file_range",
      { path: "big.log", start_line: mid, end_line: mid + 1 },
      { session: "big" },
    );
    assert.equal(r.status, "ok");
    const e = await host.call("edit_file", edit, { session: "big" });
    assert.equal(e.status, "ok", JSON.stringify(e).slice(0, 300));
    const disk = readFileSync(path.join(fx.root, "big.log"));
    const res = expectOk<Record<string, unknown>>(e).result;
    assert.equal(res.new_sha256, sha(disk));
    assert.equal(res.new_bytes, disk.length);
    assert.equal(res.replacements, 1);
    assert.equal(disk.toString().split("\n")[mid - 1], "EDITED");
    // A streamed edit never holds the file whole, so its display says why there is no diff.
    assert.deepEqual(expectOk(e).display, {
      diff: "",
      diff_complete: false,
      diff_note: "no diff: the file is over 8 MiB and was edited in a stream, without holding it whole",
    });
    // The session's marker moved with its own write: a second edit needs no new read.
    const again = await host.call(
      "edit_file",
      { path: "big.log", old_string: "EDITED\n", new_string: "EDITED TWICE\n" },
      { session: "big" },
    );
    assert.equal(again.status, "ok", JSON.stringify(again).slice(0, 300));
    assert.deepEqual(readdirSync(fx.root), ["big.log"]);
  });

  test("editing a 100 MB file keeps the process's memory flat (peak RSS far under the file size)", async () => {
    const helper = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/edit-rss.mjs");
    const run = async (mib: number) => {
      const dir = path.join(fx.base, `rss-${mib}`);
      mkdirSync(path.join(dir, "ws"), { recursive: true });
      const file = path.join(dir, "ws", "big.log");
      const block = Buffer.from(`${"f".repeat(63)}\n`.repeat(16384)); // 1 MiB
      const fd = openSync(file, "w");
      for (let b = 0; b < mib; b++) writeSync(fd, block);
      writeSync(fd, "the unique line near the end\n");
      writeSync(fd, block);
      closeSync(fd);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [helper, path.join(dir, "ws"), path.join(dir, "state"), "big.log"],
        { maxBuffer: 1 << 20 },
      );
      const out = JSON.parse(stdout);
      assert.equal(out.edit.status, "ok", JSON.stringify(out).slice(0, 500));
      assert.equal(
        readFileSync(file)
          .subarray(mib * (1 << 20), mib * (1 << 20) + 20)
          .toString(),
        "the edited line near",
      );
      return out.maxRssKiB * 1024;
    };
    const small = await run(10);
    const big = await run(100);
    console.log(
      `# peak RSS ${(small / 2 ** 20).toFixed(1)} MiB editing a 10 MiB file, ${(big / 2 ** 20).toFixed(1)} MiB editing a 100 MiB file`,
    );
    // The in-memory path holds the file several times over (bytes, text, result): it would grow by
    // hundreds of MiB here. Streamed, what grows is a few chunks and garbage between collections.
    assert.ok(
      big - small < (90 * 2 ** 20) / 8,
      `peak RSS grew by ${big - small} bytes from a 10 MiB to a 100 MiB file`,
    );
  });
});
