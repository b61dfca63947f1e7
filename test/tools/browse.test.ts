// list_dir, find_files, stat_file, count_stats over the shared tree: gitignore, skipped folders,
// links out of the root, the control plane, denied substrings, caps, paging, progress and abort.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { buildTree } from "./browse-fixture.js";
import { expectError, expectOk } from "../helpers/expect.js";

function ok<T = Record<string, any>>(r: CallResult): T {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return expectOk<T>(r).result;
}

describe("browse tools", () => {
  let fx: Fixture;
  const host = (policies: Record<string, string> = {}) =>
    fx.host({ config: { toolsPolicies: { local_fs: policies }, agents: {} } });
  before(() => {
    fx = makeFixture();
    buildTree(fx);
    fx.write({ "data/big.bin": Buffer.alloc(1536 * 1024, 7) });
  });
  after(() => fx.cleanup());

  describe("list_dir", () => {
    test("one entry a line: folders /, executables *, links @, big files with their size; ignored, .git, node_modules and links out left out", async () => {
      const out = ok(await (await host()).call("list_dir", {}));
      assert.deepEqual(out.entries.split("\n"), [
        ".gitignore",
        "README.md",
        "bin/",
        "data/",
        "docs/",
        "inner-link.ts@",
        "pkg/",
        "src/",
      ]);
      assert.match(out.note, /3 gitignored entries were left out/);
      const data = ok(await (await host()).call("list_dir", { path: "data" }));
      assert.deepEqual(
        data.entries.split("\n"),
        ["data/big.bin (1.5 MiB)", "data/blob.bin", "data/plain.bin"].map((e) => e.slice(5)),
      );
      assert.equal(ok(await (await host()).call("list_dir", { path: "bin" })).entries, "tool.sh*");
    });

    test("recursive down to max_depth, paths relative to the folder listed", async () => {
      const h = await host();
      const two = ok(await h.call("list_dir", { path: "pkg", recursive: true, max_depth: 2 }));
      assert.deepEqual(two.entries.split("\n"), [
        ".gitignore",
        "keep.gen.ts",
        "nested/",
        "nested/.gitignore",
        "nested/public.txt",
      ]);
      const one = ok(await h.call("list_dir", { path: "pkg", recursive: true, max_depth: 1 }));
      assert.deepEqual(one.entries.split("\n"), [".gitignore", "keep.gen.ts", "nested/"]);
      const all = ok(await h.call("list_dir", { recursive: true, max_depth: 10 }));
      const lines: string[] = all.entries.split("\n");
      for (const hidden of [
        "secret.env",
        "build/",
        "app.log",
        "skip.gen.ts",
        "private/",
        ".git/",
        "node_modules/",
        "escape",
        "leak",
      ]) {
        assert.equal(
          lines.some((l) => l === hidden || l.startsWith(hidden) || l.includes("/" + hidden)),
          false,
          hidden,
        );
      }
      assert.ok(lines.includes("src/deep/c.ts") && lines.includes("pkg/nested/public.txt"));
    });

    test("pages by offset, with a note while more remain", async () => {
      fx.write(
        Object.fromEntries(Array.from({ length: 520 }, (_, i) => [`pages/f${String(i).padStart(3, "0")}.txt`, "x"])),
      );
      const h = await host();
      const first = ok(await h.call("list_dir", { path: "pages" }));
      assert.equal(first.count, 500);
      assert.equal(first.next_offset, 500);
      assert.match(first.note, /pass next_cursor as cursor to continue/);
      const second = ok(await h.call("list_dir", { path: "pages", offset: first.next_offset }));
      assert.equal(second.count, 20);
      assert.equal(second.next_offset, undefined);
      assert.deepEqual(
        [...first.entries.split("\n"), ...second.entries.split("\n")],
        Array.from({ length: 520 }, (_, i) => `f${String(i).padStart(3, "0")}.txt`),
      );
    });

    test("paging by cursor while entries come and go: each entry listed once, the hidden never", async () => {
      // LATCH_STRESS=1: the fault round's 50,000 entries; by default enough for a few pages.
      const n = process.env.LATCH_STRESS ? 50_000 : 1_600;
      const name = (i: number) => `e${String(i).padStart(5, "0")}.txt`;
      fx.write(Object.fromEntries(Array.from({ length: n }, (_, i) => [`churn/${name(i)}`, "x"])));
      fx.write({ "churn/.env": "SECRET=1\n" });
      symlinkSync("/etc", path.join(fx.root, "churn", "e00001x-out")); // a link out of the root, mid-list
      const dir = path.join(fx.root, "churn");
      after(() => rmSync(dir, { recursive: true, force: true })); // the shared tree stays as the other tests expect
      const h = await host();
      const seen = new Map<string, number>();
      const removedUnseen = new Set<string>();
      const addedAfter = new Set<string>();
      let cursor: string | undefined;
      let page = 0;
      for (;;) {
        const r = ok(await h.call("list_dir", { path: "churn", ...(cursor ? { cursor } : {}) }));
        for (const e of r.entries === "" ? [] : (r.entries as string).split("\n")) seen.set(e, (seen.get(e) ?? 0) + 1);
        cursor = r.next_cursor;
        if (!cursor) break;
        // Between pages: one entry already shown and one not yet shown go; one sorting before the
        // cursor and one after it come.
        page++;
        const last = (r.entries as string).split("\n").at(-1)!;
        const lastIndex = Number(last.slice(1, 6));
        rmSync(path.join(dir, name(lastIndex - 3)));
        const ahead = name(lastIndex + 7);
        rmSync(path.join(dir, ahead));
        removedUnseen.add(ahead);
        writeFileSync(path.join(dir, `a-before-${page}.txt`), "x"); // sorts before every e…: never shown
        const later = `${name(lastIndex + 11)}-added`; // sorts after the cursor: shown once
        writeFileSync(path.join(dir, later), "x");
        addedAfter.add(later);
      }
      assert.ok(page >= 3, `${page + 1} pages`);
      const twice = [...seen].filter(([, c]) => c > 1);
      assert.deepEqual(twice, [], "no entry is listed twice");
      for (let i = 0; i < n; i++)
        if (!removedUnseen.has(name(i))) assert.equal(seen.get(name(i)), 1, `${name(i)} listed once`);
      for (const e of removedUnseen) assert.equal(seen.has(e), false, `${e} was gone before its page`);
      for (const e of addedAfter) assert.equal(seen.get(e), 1, `${e} came after the cursor and is listed`);
      assert.equal(
        [...seen.keys()].some((e) => e.startsWith("a-before-")),
        false,
      );
      assert.equal(seen.has(".env"), false, "the quarantine holds across pages");
      assert.equal(seen.has("e00001x-out@"), false, "a link out of the root is left out");
      // Offset paging counts the same entries (files on the walk's verdict before the offset).
      const at = ok(await h.call("list_dir", { path: "churn", offset: 1000 }));
      const prior = ok(await h.call("list_dir", { path: "churn", offset: 999 }));
      assert.equal((prior.entries as string).split("\n")[1], (at.entries as string).split("\n")[0]);
    });

    test("the folder named by path is listed even when it is node_modules; a file is an error that names the fix", async () => {
      const h = await host();
      assert.equal(ok(await h.call("list_dir", { path: "node_modules" })).entries, "lib/");
      const f = await h.call("list_dir", { path: "README.md" });
      assert.equal(expectError(f).code, "ENOTDIR");
      assert.equal((await h.call("list_dir", { path: "escape" })).status, "refused");
    });
  });

  describe("find_files", () => {
    test("a base-name glob anywhere, or a path glob with **, sorted; ignored and out-of-root files never found", async () => {
      const h = await host();
      assert.deepEqual(ok(await h.call("find_files", { pattern: "*.ts" })), {
        matches: ["pkg/keep.gen.ts", "src/a.ts", "src/b.ts", "src/deep/c.ts"],
        count: 4,
        truncated: false,
      });
      assert.deepEqual(ok(await h.call("find_files", { pattern: "src/**/*.ts" })).matches, [
        "src/a.ts",
        "src/b.ts",
        "src/deep/c.ts",
      ]);
      assert.deepEqual(ok(await h.call("find_files", { pattern: "deep/*", path: "src" })).matches, [
        "src/deep/Mixed.txt",
        "src/deep/c.ts",
      ]);
      assert.equal(ok(await h.call("find_files", { pattern: "leak.txt" })).count, 0);
      assert.equal(ok(await h.call("find_files", { pattern: "secret.env" })).count, 0);
      assert.equal(ok(await h.call("find_files", { pattern: "*.gen.ts" })).count, 1);
      assert.deepEqual(ok(await h.call("find_files", { pattern: "*.js", path: "node_modules" })).matches, [
        "node_modules/lib/index.js",
      ]);
    });

    test("capped by _max_find_results, with the total and truncated", async () => {
      const out = ok(await (await host({ _max_find_results: "2" })).call("find_files", { pattern: "*.ts" }));
      assert.deepEqual(out.matches, ["pkg/keep.gen.ts", "src/a.ts"]);
      assert.equal(out.count, 4);
      assert.equal(out.truncated, true);
      assert.match(out.note, /_max_find_results = 2/);
    });
  });

  describe("stat_file", () => {
    test("every field, with an octal mode and an ISO mtime", async () => {
      const h = await host();
      const sh = ok(await h.call("stat_file", { path: "bin/tool.sh" }));
      assert.deepEqual(Object.keys(sh).sort(), [
        "binary",
        "executable",
        "is_dir",
        "is_symlink",
        "mode",
        "mtime",
        "name",
        "path",
        "size",
        "size_human",
      ]);
      assert.equal(sh.name, "tool.sh");
      assert.equal(sh.mode, "0755");
      assert.equal(sh.executable, true);
      assert.equal(sh.binary, false);
      assert.equal(sh.mtime, statSync(path.join(fx.root, "bin/tool.sh")).mtime.toISOString());
      const big = ok(await h.call("stat_file", { path: "data/big.bin" }));
      assert.equal(big.size, 1536 * 1024);
      assert.equal(big.size_human, "1.5 MiB");
      assert.equal(ok(await h.call("stat_file", { path: "data/blob.bin" })).binary, true);
      const dir = ok(await h.call("stat_file", { path: "src" }));
      assert.equal(dir.is_dir, true);
      assert.equal(dir.executable, false);
      const link = ok(await h.call("stat_file", { path: "inner-link.ts" }));
      assert.equal(link.is_symlink, true);
      assert.equal(link.name, "inner-link.ts");
      assert.equal(link.path, "src/a.ts");
    });

    test("a link out of the root is refused; a missing path is ENOENT", async () => {
      const h = await host();
      assert.equal((await h.call("stat_file", { path: "leak-link.txt" })).status, "refused");
      expectError(await h.call("stat_file", { path: "nope.txt" }), "ENOENT");
    });
  });

  describe("count_stats", () => {
    test("a file: lines, words, bytes", async () => {
      assert.deepEqual(ok(await (await host()).call("count_stats", { path: "src/a.ts" })), {
        path: "src/a.ts",
        lines: 5,
        words: 22,
        bytes: 80,
      });
      fx.write({ "nonl.txt": "one two\nthree" });
      assert.deepEqual(ok(await (await host()).call("count_stats", { path: "nonl.txt" })), {
        path: "nonl.txt",
        lines: 2,
        words: 3,
        bytes: 13,
      });
    });

    test("a folder: totals, files, by extension; gitignored files and links out are not counted", async () => {
      const out = ok(await (await host()).call("count_stats", { path: "pkg" }));
      // .gitignore (2 lines) + keep.gen.ts + nested/.gitignore + nested/public.txt; not skip.gen.ts or private/key.txt.
      assert.equal(out.files, 4);
      assert.equal(out.lines, 5);
      assert.deepEqual(out.by_extension[".ts"], { files: 1, lines: 1, words: 3, bytes: 22 });
      const all = ok(await (await host()).call("count_stats", {}));
      assert.equal(all.binary_files, 2); // blob.bin and plain.bin hold NUL bytes; big.bin is text
      assert.ok(all.bytes > 1536 * 1024);
      // What the walk skips adds nothing: the totals equal the sum over the files find_files sees.
      const every = ok(await (await host({ _max_find_results: "100000" })).call("find_files", { pattern: "*" }));
      assert.equal(all.files, every.count);
      assert.equal(
        every.matches.some((m: string) => /secret|build|app\.log|skip\.gen|private|leak|escape/.test(m)),
        false,
      );
    });
  });

  describe("the control plane and denied substrings", () => {
    test("never appear in list_dir, find_files or count_stats", async () => {
      const inner = makeFixture();
      try {
        inner.write({ "ok.txt": "ok\n", "vault/key.txt": "k\n", "agents.toml": "# config\n" });
        const state = path.join(inner.root, "latch-state");
        mkdirSync(state);
        writeFileSync(path.join(state, "notes.txt"), "state\n");
        symlinkSync(path.join(inner.root, "agents.toml"), path.join(inner.root, "config-link.toml"));
        const h = await inner.host({
          stateDir: state,
          config: undefined,
          configPath: path.join(inner.root, "agents.toml"),
        });
        assert.equal(ok(await h.call("list_dir", { recursive: true })).entries, "ok.txt\nvault/\nvault/key.txt");
        assert.deepEqual(ok(await h.call("find_files", { pattern: "*" })).matches, ["ok.txt", "vault/key.txt"]);
        assert.equal(ok(await h.call("count_stats", {})).files, 2);
        const denied = await inner.host({
          config: { toolsPolicies: { local_fs: { _denied_path_substrings: "vault" } }, agents: {} },
        });
        assert.equal(ok(await denied.call("list_dir", { recursive: true })).entries.includes("vault"), false);
        // This host's state dir is elsewhere, so latch-state/ is an ordinary folder to it.
        assert.deepEqual(ok(await denied.call("find_files", { pattern: "*.txt" })).matches, [
          "latch-state/notes.txt",
          "ok.txt",
        ]);
      } finally {
        inner.cleanup();
      }
    });
  });

  describe("special files", () => {
    test("a named pipe is refused by grep and count_stats, not read (which would block)", async () => {
      execFileSync("mkfifo", [path.join(fx.root, "pipe")]);
      const h = await host();
      for (const [tool, args] of [
        ["count_stats", { path: "pipe" }],
        ["grep", { pattern: "x", path: "pipe" }],
      ] as const) {
        const r = await h.call(tool, args);
        assert.equal(expectError(r).code, "ENOTFILE", tool);
      }
      // A folder search walks past the pipe with either engine.
      for (const engine of ["rg", "js"]) {
        const g = await fx.host({ env: { LATCH_GREP_ENGINE: engine } });
        assert.ok(ok(await g.call("grep", { pattern: "needle" })).total_matches > 0, engine);
      }
      assert.equal(ok(await h.call("count_stats", {})).files > 0, true);
    });
  });

  describe("limits from [tools_policies.local_fs]", () => {
    test("_allowed_dir makes that folder the root of every browse tool", async () => {
      const h = await host({ _allowed_dir: "src" });
      assert.deepEqual(ok(await h.call("list_dir", {})).entries.split("\n"), ["a.ts", "b.ts", "deep/"]);
      assert.deepEqual(ok(await h.call("find_files", { pattern: "*.md" })).matches, []);
      assert.equal(ok(await h.call("count_stats", {})).files, 4);
      assert.equal((await h.call("list_dir", { path: ".." })).status, "refused");
      assert.equal((await h.call("grep", { pattern: "needle", path: "../README.md" })).status, "refused");
      assert.equal(ok(await h.call("stat_file", { path: "." })).name, ".");
    });
  });

  describe("long walks", () => {
    test("report progress, and stop with ECANCELED when the signal aborts", async () => {
      fx.write(Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`walk/d${i % 10}/f${i}.txt`, "w\n"])));
      const h = await host();
      for (const tool of ["find_files", "count_stats", "list_dir"]) {
        const args =
          tool === "find_files"
            ? { pattern: "*.txt", path: "walk" }
            : tool === "list_dir"
              ? { path: "walk", recursive: true, offset: 2400 }
              : { path: "walk" };
        const seen: number[] = [];
        const done = ok(await h.call(tool, args, { onProgress: (p) => seen.push(p.progress) }));
        assert.ok(seen.length >= 1, `${tool} reported progress`);
        assert.ok(done);
        const ctl = new AbortController();
        const r = await h.call(tool, args, { signal: ctl.signal, onProgress: () => ctl.abort() });
        assert.equal(expectError(r).code, "ECANCELED", `${tool}: ${JSON.stringify(r).slice(0, 200)}`);
      }
    });
  });
});
