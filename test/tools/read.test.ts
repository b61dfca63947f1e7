// read_file and read_file_range: text only, bounded output, streaming windows, the unchanged answer.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { CLI } from "../helpers/cli.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { expectError, expectRefused } from "../helpers/expect.js";

type Ok = { status: "ok"; result: Record<string, any> };
const ok = (out: unknown): Record<string, any> => {
  assert.equal((out as Ok).status, "ok", JSON.stringify(out));
  return (out as Ok).result;
};

describe("read_file", () => {
  let fx: Fixture;
  let host: Host;
  before(async () => {
    fx = makeFixture();
    host = await fx.host({
      config: { toolsPolicies: { local_fs: { _max_read_bytes: "20000", _max_output_bytes: "1000" } }, agents: {} },
    });
  });
  after(() => fx.cleanup());

  test("returns the whole text with its line count, size and hash", async () => {
    fx.write({ "a.txt": "one\ntwo\nthree" });
    const r = ok(await host.call("read_file", { path: "a.txt" }, { session: "s1" }));
    assert.deepEqual(r, {
      path: "a.txt",
      content: "one\ntwo\nthree",
      total_lines: 3,
      bytes: 13,
      sha256: createHash("sha256").update("one\ntwo\nthree").digest("hex"),
    });
  });

  test("a repeated full read of unchanged content answers unchanged, unless force", async () => {
    fx.write({ "rep.txt": "same\n" });
    const first = ok(await host.call("read_file", { path: "rep.txt" }, { session: "rep" }));
    const second = ok(await host.call("read_file", { path: "rep.txt" }, { session: "rep" }));
    assert.deepEqual(Object.keys(second).sort(), ["bytes", "note", "path", "sha256", "unchanged"]);
    assert.equal(second.unchanged, true);
    assert.equal(second.sha256, first.sha256);
    assert.equal(second.content, undefined);
    const forced = ok(await host.call("read_file", { path: "rep.txt", force: true }, { session: "rep" }));
    assert.equal(forced.content, "same\n");
    const otherSession = ok(await host.call("read_file", { path: "rep.txt" }, { session: "other" }));
    assert.equal(otherSession.content, "same\n", "another session has not read it");
    fx.write({ "rep.txt": "changed\n" });
    const afterChange = ok(await host.call("read_file", { path: "rep.txt" }, { session: "rep" }));
    assert.equal(afterChange.content, "changed\n");
  });

  test("refuses folders and binary files with a reason", async () => {
    mkdirSync(path.join(fx.root, "dir"));
    const d = await host.call("read_file", { path: "dir" });
    assert.equal(expectError(d).code, "EISDIR");
    writeFileSync(path.join(fx.root, "nul.bin"), Buffer.from([0x61, 0x00, 0x62]));
    const b = await host.call("read_file", { path: "nul.bin" });
    assert.match(expectRefused(b).reason, /binary/);
    const junk = Buffer.alloc(4000);
    for (let i = 0; i < junk.length; i++) junk[i] = 0x80 + (i % 60); // continuation bytes: not UTF-8
    writeFileSync(path.join(fx.root, "junk.bin"), junk);
    assert.equal((await host.call("read_file", { path: "junk.bin" })).status, "refused");
    writeFileSync(path.join(fx.root, "utf8.txt"), "héllo wörld ✓ ".repeat(50));
    assert.equal((await host.call("read_file", { path: "utf8.txt" })).status, "ok", "valid multi-byte UTF-8 is text");
  });

  test("a named pipe is refused at once: nobody ever writes to it, and the read does not wait", async () => {
    execFileSync("mkfifo", [path.join(fx.root, "pipe")]);
    for (const [tool, args] of [
      ["read_file", { path: "pipe" }],
      ["read_file_range", { path: "pipe", start_line: 1 }],
    ] as const) {
      // In a child with a time limit: an open() that waited for a writer would hold that whole process.
      const run = spawnSync(
        process.execPath,
        [CLI, "call", tool, JSON.stringify(args), "--root", fx.root, "--state-dir", fx.state],
        { encoding: "utf8", timeout: 30_000 },
      );
      assert.equal(run.signal, null, `${tool} was still waiting after 30 s`);
      const result = JSON.parse(run.stdout) as { status: string; message: string };
      assert.equal(result.status, "error", tool);
      assert.match(result.message, /not a regular file \(a pipe, socket or device\)/, tool);
    }
  });

  test("a missing file is ENOENT with a next step", async () => {
    const out = await host.call("read_file", { path: "nope.txt" });
    assert.deepEqual(out, {
      status: "error",
      code: "ENOENT",
      message: "`nope.txt` does not exist. Check the name with find_files or list_dir.",
    });
  });

  test("over _max_read_bytes it refuses and names read_file_range", async () => {
    fx.write({ "big.txt": "x".repeat(99) + "\n".repeat(1) + "y\n".repeat(12000) });
    const out = await host.call("read_file", { path: "big.txt" });
    assert.match(expectRefused(out).reason, /over the read limit/);
    assert.match(expectRefused(out).hint ?? "", /read_file_range/);
  });

  test("over _max_output_bytes it returns whole first lines and the start_line that continues", async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`);
    fx.write({ "long.txt": lines.join("\n") + "\n" });
    const r = ok(await host.call("read_file", { path: "long.txt" }, { session: "long" }));
    assert.ok(Buffer.byteLength(r.content) <= 1000);
    assert.ok(r.content.endsWith("\n"), "cut at a whole line");
    const shown = r.content.split("\n").length - 1;
    assert.equal(r.content, lines.slice(0, shown).join("\n") + "\n");
    assert.equal(r.next_start_line, shown + 1);
    assert.equal(r.total_lines, 300);
    assert.match(r.note, new RegExp(`start_line ${shown + 1}`));
    const rest = ok(
      await host.call("read_file_range", { path: "long.txt", start_line: r.next_start_line }, { session: "long" }),
    );
    assert.ok(rest.content.startsWith(`line ${shown + 1}\n`));
  });

  test("start_line hands off to read_file_range", async () => {
    fx.write({ "h.txt": "a\nb\nc\nd\n" });
    const r = ok(await host.call("read_file", { path: "h.txt", start_line: 2, end_line: 3 }));
    assert.equal(r.content, "b\nc\n");
    assert.equal(r.start_line, 2);
    assert.equal(r.end_line, 3);
  });
});

describe("read_file_range", () => {
  let fx: Fixture;
  let host: Host;
  before(async () => {
    fx = makeFixture();
    host = await fx.host({ config: { toolsPolicies: { local_fs: { _max_output_bytes: "64" } }, agents: {} } });
    fx.write({ "r.txt": "1\n2\n3\n4\n5\n", "nolf.txt": "a\nb", "crlf.txt": "a\r\nb\r\n", "empty.txt": "" });
  });
  after(() => fx.cleanup());

  test("returns exactly the lines asked for", async () => {
    const r = ok(await host.call("read_file_range", { path: "r.txt", start_line: 2, end_line: 4 }));
    assert.equal(r.content, "2\n3\n4\n");
    assert.deepEqual([r.start_line, r.end_line, r.total_lines], [2, 4, 5]);
    assert.equal(r.next_start_line, undefined);
  });

  test("an end past the end stops at the last line; a last line without newline counts", async () => {
    const r = ok(await host.call("read_file_range", { path: "nolf.txt", start_line: 2, end_line: 10 }));
    assert.equal(r.content, "b");
    assert.deepEqual([r.end_line, r.total_lines], [2, 2]);
  });

  test("a start past the end returns no lines and the file's line count", async () => {
    const r = ok(await host.call("read_file_range", { path: "r.txt", start_line: 50 }));
    assert.equal(r.content, "");
    assert.equal(r.total_lines, 5);
    assert.match(r.note, /past the end: the file has 5 lines/);
    const e = ok(await host.call("read_file_range", { path: "empty.txt" }));
    assert.deepEqual([e.content, e.total_lines], ["", 0]);
  });

  test("CRLF is returned byte for byte", async () => {
    const r = ok(await host.call("read_file_range", { path: "crlf.txt" }));
    assert.equal(r.content, "a\r\nb\r\n");
  });

  test("end_line before start_line is an error naming both", async () => {
    const out = await host.call("read_file_range", { path: "r.txt", start_line: 4, end_line: 2 });
    assert.deepEqual(out, {
      status: "error",
      code: "EINVAL",
      message: "Expected `end_line` to be at least start_line (4), got `2`.",
    });
  });

  test("one line longer than the output limit is cut, and the next line named", async () => {
    fx.write({ "wide.txt": "w".repeat(500) + "\nnext\n" });
    const r = ok(await host.call("read_file_range", { path: "wide.txt" }));
    assert.equal(r.content, "w".repeat(64));
    assert.equal(r.next_start_line, 2);
    assert.match(r.note, /Line 1 is longer than the output limit/);
  });

  test("a window that spans many read chunks is exact", async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `row-${i + 1}-${"z".repeat(i % 17)}`);
    fx.write({ "many.txt": lines.join("\n") + "\n" });
    const r = ok(await host.call("read_file_range", { path: "many.txt", start_line: 150_001, end_line: 150_002 }));
    assert.equal(r.content, lines.slice(150_000, 150_002).join("\n") + "\n");
    assert.equal(r.total_lines, 200_000);
  });
});
