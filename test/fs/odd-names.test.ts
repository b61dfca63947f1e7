// Odd names and text: lone UTF-16 surrogates are refused (never written as U+FFFD), names holding
// control characters are shown escaped and the escaped form names the file, a newline in a name never
// splits a list_dir entry, and a 50,000-entry folder pages end to end by cursor.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";

type Ok = { status: "ok"; result: any };
type Err = { status: "error"; code: string; message: string };

describe("lone surrogates", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("in content, in an edit and in a path: refused with the argument named, nothing written", async () => {
    fx.write({ "t.txt": "plain\n" });
    const host = await fx.host();
    const w = (await host.call("write_file", { path: "new.txt", content: "a\uD800b" })) as Err;
    assert.equal(w.status, "error");
    assert.equal(w.code, "EINVAL");
    assert.match(w.message, /`content` holds a lone UTF-16 surrogate \(at character 1\).*nothing ran/);
    assert.equal(existsSync(path.join(fx.root, "new.txt")), false);
    assert.equal((await host.call("read_file", { path: "t.txt" })).status, "ok");
    const e = (await host.call("edit_file", { path: "t.txt", old_string: "plain", new_string: "x\uDC00" })) as Err;
    assert.equal(e.code, "EINVAL");
    assert.match(e.message, /`new_string`/);
    assert.equal(readFileSync(path.join(fx.root, "t.txt"), "utf8"), "plain\n");
    const p = (await host.call("write_file", { path: "bad\uDBFF.txt", content: "x" })) as Err;
    assert.equal(p.code, "EINVAL");
    assert.match(p.message, /`path`/);
    // A well-formed pair is fine.
    const ok = await host.call("write_file", { path: "emoji.txt", content: "\uD83D\uDE00\n" });
    assert.equal(ok.status, "ok");
    assert.equal(readFileSync(path.join(fx.root, "emoji.txt"), "utf8"), "😀\n");
  });
});

describe("names with control characters", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("shown escaped in list_dir, one line each, and the escaped form opens and writes the file", async () => {
    fx.write({ "a\nb.txt": "newline name\n", "tab\there": "tab name\n", "c.txt": "plain\n", "back\\slash": "bs\n" });
    const host = await fx.host();
    const ls = (await host.call("list_dir", { path: "." })) as Ok;
    assert.equal(ls.status, "ok", JSON.stringify(ls));
    const lines = ls.result.entries.split("\n");
    assert.deepEqual(lines, ["a\\nb.txt", "back\\slash", "c.txt", "tab\\there"]);
    assert.equal(ls.result.count, 4);
    const r = (await host.call("read_file", { path: "a\\nb.txt" })) as Ok;
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.content, "newline name\n");
    const w = await host.call("write_file", { path: "a\\nb.txt", content: "changed\n" });
    assert.equal(w.status, "ok", JSON.stringify(w));
    assert.equal(readFileSync(path.join(fx.root, "a\nb.txt"), "utf8"), "changed\n");
    assert.equal(existsSync(path.join(fx.root, "a\\nb.txt")), false, "no file with the escaped name was made");
    // grep and find_files show the same escaped form (a tab name here: a newline name is left out by
    // their file enumeration today, which this change does not reach; see the closing note).
    for (const engine of ["rg", "js"]) {
      const h = await fx.host({ env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine } });
      const g = (await h.call("grep", { pattern: "tab name" })) as Ok;
      assert.equal(g.status, "ok", JSON.stringify(g));
      assert.equal(g.result.results, "tab\\there:1: tab name", engine);
      const f = (await h.call("find_files", { pattern: "tab*" })) as Ok;
      assert.deepEqual(f.result.matches, ["tab\\there"], engine);
    }
    // A name with a backslash but no control character is shown and taken as it is.
    const b = (await host.call("read_file", { path: "back\\slash" })) as Ok;
    assert.equal(b.result.content, "bs\n");
  });
});

describe("cursor paging of a recursive listing", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("gives the same entries, in the same order, as paging by offset", async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 6; d++) for (let f = 0; f < 110; f++) files[`t/d${d}/s${f % 3}/f${f}`] = "";
    files["t/d2-x/z"] = "";
    fx.write(files);
    const host = await fx.host();
    const pages = async (by: "cursor" | "offset") => {
      const all: string[] = [];
      let more: Record<string, unknown> = {};
      for (let i = 0; i < 20; i++) {
        const out = (await host.call("list_dir", { path: "t", recursive: true, max_depth: 5, ...more })) as Ok;
        assert.equal(out.status, "ok", JSON.stringify(out).slice(0, 300));
        all.push(...out.result.entries.split("\n"));
        if (out.result.next_cursor === undefined) return all;
        more = by === "cursor" ? { cursor: out.result.next_cursor } : { offset: out.result.next_offset };
      }
      return assert.fail("never ended");
    };
    const byCursor = await pages("cursor");
    assert.equal(byCursor.length, 6 * 110 + 6 * 3 + 6 + 2);
    assert.deepEqual(byCursor, await pages("offset"));
  });
});

describe("a 50,000-entry folder", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("pages end to end by cursor: every entry once, in order", async () => {
    const dir = path.join(fx.root, "big");
    mkdirSync(dir);
    const names = Array.from({ length: 50_000 }, (_, i) => `f${String(i).padStart(5, "0")}`);
    for (const n of names) writeFileSync(path.join(dir, n), "");
    const host = await fx.host();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 200; page++) {
      const out = (await host.call("list_dir", { path: "big", ...(cursor ? { cursor } : {}) })) as Ok;
      assert.equal(out.status, "ok", JSON.stringify(out).slice(0, 300));
      if (out.result.entries) seen.push(...out.result.entries.split("\n"));
      cursor = out.result.next_cursor;
      if (cursor === undefined) break;
    }
    assert.equal(seen.length, names.length);
    assert.deepEqual(seen, names);
    const bad = (await host.call("list_dir", { path: ".", cursor: "nonsense" })) as Err;
    assert.equal(bad.code, "EINVAL");
  });
});
