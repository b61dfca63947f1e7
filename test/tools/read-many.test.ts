// read_many_files (paths or glob, bounded total, a line per unreadable file, full-read credit only
// for a file shown whole) and read_file_range's negative start_line.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
let hostP: Promise<Host> | undefined;
const host = () =>
  (hostP ??= fx.host({ config: { toolsPolicies: { local_fs: { _max_output_bytes: "4096" } }, agents: {} } }));
const call = async (tool: string, args: Record<string, unknown>): Promise<any> => (await host()).call(tool, args);

describe("read_many_files", () => {
  test("reads the files it can; each one it cannot is one line in unreadable", async () => {
    fx.write({ "rm/a.txt": "a\n", "rm/b.txt": "b1\nb2\n" });
    writeFileSync(path.join(fx.root, "rm/bin.dat"), Buffer.from([0, 1, 2, 3]));
    mkdirSync(path.join(fx.root, "rm/dir"));
    writeFileSync(path.join(fx.base, "outside.txt"), "secret\n");
    const r = await call("read_many_files", {
      paths: ["rm/a.txt", "rm/missing.txt", "rm/bin.dat", "rm/b.txt", "../outside.txt", "rm/dir"],
    });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual(
      r.result.files.map((f: any) => [f.path, f.content]),
      [
        ["rm/a.txt", "a\n"],
        ["rm/b.txt", "b1\nb2\n"],
      ],
    );
    assert.equal(r.result.unreadable.length, 4);
    for (const [i, name] of ["../outside.txt", "rm/missing.txt", "rm/bin.dat", "rm/dir"].entries())
      assert.ok(
        r.result.unreadable.some((l: string) => l.startsWith(name)),
        `${i}: ${name}`,
      );
    assert.ok(!JSON.stringify(r).includes("secret"));
  });

  test("a file shown whole is a full read (write_file may overwrite it); a cut one only a partial read", async () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    fx.write({ "credit/small.txt": "small\n", "credit/big.txt": big });
    const r = await call("read_many_files", { paths: ["credit/small.txt", "credit/big.txt"] });
    assert.equal(r.status, "ok");
    const bigEntry = r.result.files.find((f: any) => f.path === "credit/big.txt");
    assert.ok(bigEntry.next_start_line > 1, "the big file was cut");
    assert.equal((await call("write_file", { path: "credit/small.txt", content: "x\n" })).status, "ok");
    assert.equal((await call("write_file", { path: "credit/big.txt", content: "x\n" })).status, "refused");
    const e = await call("edit_file", { path: "credit/big.txt", old_string: "line 7\n", new_string: "seven\n" });
    assert.equal(e.status, "ok", JSON.stringify(e));
  });

  test("the total is bounded: past the budget, files are listed in not_shown", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`budget/f${String(i).padStart(2, "0")}.txt`] = "x".repeat(900) + "\n";
    fx.write(files);
    const r = await call("read_many_files", { paths: Object.keys(files) });
    assert.equal(r.status, "ok");
    assert.ok(r.result.not_shown.length > 0);
    assert.equal(r.result.files.length + r.result.not_shown.length, 40);
    assert.ok(JSON.stringify(r.result).length <= 4 * 4096, "within 4 × _max_output_bytes");
    assert.match(r.result.note, /budget/);
  });

  test("a glob reads matching files, leaves credentials and hidden entries out, and answers unchanged the second time", async () => {
    fx.write({ "g/one.md": "1\n", "g/sub/two.md": "2\n", "g/three.txt": "3\n", "g/.ssh/id_rsa.md": "KEY\n" });
    const r = await call("read_many_files", { glob: "**/*.md", path: "g" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.deepEqual(r.result.files.map((f: any) => f.path).sort(), ["g/one.md", "g/sub/two.md"]);
    assert.ok(!JSON.stringify(r).includes("KEY"));
    const again = await call("read_many_files", { glob: "**/*.md", path: "g" });
    assert.ok(again.result.files.every((f: any) => f.unchanged === true));
    const forced = await call("read_many_files", { glob: "**/*.md", path: "g", force: true });
    assert.ok(forced.result.files.every((f: any) => typeof f.content === "string"));
  });

  test("paths and glob together, or neither, are errors", async () => {
    assert.equal((await call("read_many_files", {})).status, "error");
    assert.equal((await call("read_many_files", { paths: ["a"], glob: "*" })).status, "error");
  });
});

describe("read_file_range from the end", () => {
  test("a negative start_line counts from the end", async () => {
    fx.write({ "tail.txt": "1\n2\n3\n4\n5\n" });
    let r = await call("read_file_range", { path: "tail.txt", start_line: -2 });
    assert.equal(r.result.content, "4\n5\n");
    assert.equal(r.result.start_line, 4);
    r = await call("read_file_range", { path: "tail.txt", start_line: -1 });
    assert.equal(r.result.content, "5\n");
    r = await call("read_file_range", { path: "tail.txt", start_line: -99 });
    assert.equal(r.result.content, "1\n2\n3\n4\n5\n");
    r = await call("read_file_range", { path: "tail.txt", start_line: -3, end_line: 3 });
    assert.equal(r.result.content, "3\n");
    assert.equal((await call("read_file_range", { path: "tail.txt", start_line: 0 })).status, "error");
  });
});
