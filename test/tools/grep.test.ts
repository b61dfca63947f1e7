// grep, run against both engines: every rule holds for ripgrep and for the JS fallback alike.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { buildTree, rgChildren } from "./browse-fixture.js";
import { expectError, expectOk } from "../helpers/expect.js";
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";

/** Wait until a tree just written counts as unchanged for a search that starts now. */
const standStill = () => new Promise((r) => setTimeout(r, STEADY_MARGIN_MS + 200));

type Ok = {
  results: string;
  total_matches: number;
  files_with_matches: number;
  shown: number;
  truncated?: boolean;
  binary_files_skipped?: number;
  note?: string;
};

function ok(r: CallResult): Ok {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return expectOk<Ok>(r).result;
}

const EXPECTED_ALL = [
  "README.md:2: find the needle here",
  "bin/tool.sh:2: echo needle",
  "docs/guide.md:3: needle in docs",
  "docs/guide.md:8: needle again",
  "pkg/keep.gen.ts:1: needle kept generated",
  "pkg/nested/public.txt:1: needle public",
  "src/a.ts:2: // needle one",
  "src/a.ts:5: const w = 4; // needle two",
  "src/deep/Mixed.txt:2: needles",
  "src/deep/c.ts:1: export const needle = true;",
].join("\n");

for (const engine of ["rg", "js"] as const) {
  describe(`grep (${engine} engine)`, () => {
    let fx: Fixture;
    const env = { LATCH_GREP_ENGINE: engine };
    const host = (policies: Record<string, string> = {}) =>
      fx.host({ env, config: { toolsPolicies: { local_fs: policies }, agents: {} } });
    /** Calls to grep, and which engine answered each (asserted where rg's own answer is the point). */
    const grep = async (args: object, policies?: Record<string, string>) => {
      const r = await (await host(policies)).call("grep", args);
      return { out: ok(r), by: (r as { display?: { engine: string } }).display?.engine };
    };
    before(async () => {
      fx = makeFixture();
      buildTree(fx);
      fx.write({
        'odd-names/x"binary_offset":1.txt': "qzoddmark in text\n",
        'odd-names/y"binary_offset":null.bin': Buffer.from("qzoddmark\0binary\n"),
      });
      await settle();
    });
    after(() => fx.cleanup());
    /** rg's answer stands only for a tree unchanged since 2 s before it started (steady-tree.ts): wait that out. */
    const settle = () => (engine === "rg" ? standStill() : Promise.resolve());

    test("the engine asked for is the one that runs", async () => {
      assert.equal((await grep({ pattern: "needle" })).by, engine);
    });

    test("file names that spell rg's binary_offset key do not decide which files are binary", async () => {
      // rg's end-of-file event is read as text for its binary_offset: a name holding the key must not fool it.
      const { out, by } = await grep({ pattern: "qzoddmark", path: "odd-names" });
      assert.equal(by, engine);
      assert.equal(out.results, 'odd-names/x"binary_offset":1.txt:1: qzoddmark in text');
      assert.equal(out.total_matches, 1);
      assert.equal(out.binary_files_skipped, 1);
    });

    test("a literal search lists path:N: text, sorted; gitignored, .git, node_modules, binaries and links out are left out", async () => {
      const out = ok(await (await host()).call("grep", { pattern: "needle" }));
      assert.equal(out.results, EXPECTED_ALL);
      assert.equal(out.total_matches, 10);
      assert.equal(out.files_with_matches, 8);
      assert.equal(out.binary_files_skipped, 1);
      assert.match(out.note ?? "", /1 binary file matched and was skipped/);
      for (const leak of [
        "secret",
        "build output",
        "a log",
        "needle generated",
        "private key",
        "[core]",
        "module.exports",
        "outside the root",
      ]) {
        assert.equal(out.results.includes(leak), false, `leaked: ${leak}`);
      }
    });

    test("a gitignored secret never shows, not even through include or a regex that names it", async () => {
      const h = await host();
      for (const args of [
        { pattern: "API_KEY" },
        { pattern: "API_KEY", include: "*.env" },
        { pattern: "needle-secret", include: "secret.env" },
        { pattern: "API_.*=", regex: true },
      ]) {
        const out = ok(await h.call("grep", args));
        assert.equal(out.total_matches, 0, JSON.stringify(args));
        assert.equal(out.results, "");
      }
    });

    test("a symlink out of the root is never followed, even when path names the link", async () => {
      const h = await host();
      assert.equal(ok(await h.call("grep", { pattern: "outside the root" })).total_matches, 0);
      const viaLink = await h.call("grep", { pattern: "needle", path: "escape" });
      assert.equal(viaLink.status, "refused");
      const viaFileLink = await h.call("grep", { pattern: "needle", path: "leak-link.txt" });
      assert.equal(viaFileLink.status, "refused");
    });

    test("one file: N: text, with a line range; a range on a folder is an error that names the fix", async () => {
      const h = await host();
      assert.equal(
        ok(await h.call("grep", { pattern: "needle", path: "src/a.ts" })).results,
        "2: // needle one\n5: const w = 4; // needle two",
      );
      const ranged = ok(await h.call("grep", { pattern: "needle", path: "src/a.ts", start_line: 3, end_line: 5 }));
      assert.equal(ranged.results, "5: const w = 4; // needle two");
      assert.equal(ranged.total_matches, 1);
      const bad = await h.call("grep", { pattern: "needle", path: "src", start_line: 2 });
      assert.match(expectError(bad).message, /apply when path is one file/);
      const backwards = await h.call("grep", { pattern: "needle", path: "src/a.ts", start_line: 5, end_line: 2 });
      assert.equal(expectError(backwards).message, "Expected `end_line` to be at least start_line (5), got `2`");
    });

    test("regex, case-insensitive, and a literal that looks like a regex", async () => {
      const h = await host();
      assert.equal(
        ok(await h.call("grep", { pattern: "NEEDLE", path: "src/deep" })).results,
        "src/deep/Mixed.txt:1: A NEEDLE in caps",
      );
      const ci = ok(await h.call("grep", { pattern: "NEEDLE", path: "src/deep", case_sensitive: false }));
      assert.equal(
        ci.results,
        "src/deep/Mixed.txt:1: A NEEDLE in caps\nsrc/deep/Mixed.txt:2: needles\nsrc/deep/c.ts:1: export const needle = true;",
      );
      const re = ok(await h.call("grep", { pattern: "needle (one|two)$", regex: true }));
      assert.equal(re.results, "src/a.ts:2: // needle one\nsrc/a.ts:5: const w = 4; // needle two");
      assert.equal(ok(await h.call("grep", { pattern: "needle (one|two)$" })).total_matches, 0);
      fx.write({ "dots/x.txt": "a.b\naxb\n" });
      assert.equal(ok(await h.call("grep", { pattern: "a.b", path: "dots" })).results, "dots/x.txt:1: a.b");
      assert.equal(ok(await h.call("grep", { pattern: "a.b", path: "dots", regex: true })).total_matches, 2);
      const bad = await h.call("grep", { pattern: "(unclosed", regex: true });
      assert.equal(expectError(bad).code, "EINVAL");
    });

    test("include filters by base name, or by path under `path` when it has a slash", async () => {
      const h = await host();
      assert.equal(ok(await h.call("grep", { pattern: "needle", include: "*.ts" })).files_with_matches, 3);
      const slashed = ok(await h.call("grep", { pattern: "needle", path: "src", include: "deep/*.ts" }));
      assert.equal(slashed.results, "src/deep/c.ts:1: export const needle = true;");
    });

    test("context lines use `-`, groups are split by --, and windows merge", async () => {
      const out = ok(await (await host()).call("grep", { pattern: "needle", path: "docs", context: 1 }));
      assert.equal(
        out.results,
        [
          "docs/guide.md-2- line 2",
          "docs/guide.md:3: needle in docs",
          "docs/guide.md-4- line 4",
          "--",
          "docs/guide.md-7- line 7",
          "docs/guide.md:8: needle again",
          "docs/guide.md-9- line 9",
        ].join("\n"),
      );
      const wide = ok(await (await host()).call("grep", { pattern: "needle", path: "docs/guide.md", context: 3 }));
      assert.equal(wide.results.split("\n").length, 9);
      assert.equal(wide.results.includes("--"), false);
      const tooWide = await (await host()).call("grep", { pattern: "x", context: 11 });
      assert.equal(expectError(tooWide).code, "EINVAL");
    });

    test("a gitignored folder stays skipped when path names it; a gitignored file named by path is searched", async () => {
      const h = await host();
      const folder = ok(await h.call("grep", { pattern: "needle", path: "build" }));
      assert.equal(folder.total_matches, 0);
      assert.match(folder.note ?? "", /`build` is in a gitignored folder/);
      assert.equal(ok(await h.call("grep", { pattern: "needle", path: "pkg/nested/private" })).total_matches, 0);
      assert.equal(
        ok(await h.call("grep", { pattern: "needle", path: "build/out.js" })).results,
        "1: needle in build output",
      );
      // Only .gitignore files count, for both engines: not .ignore or .rgignore.
      fx.write({
        "dotignore/.ignore": "*.txt\n",
        "dotignore/.rgignore": "*.txt\n",
        "dotignore/seen.txt": "needle seen\n",
      });
      assert.equal(ok(await h.call("grep", { pattern: "needle seen" })).results, "dotignore/seen.txt:1: needle seen");
      // Rules are case-sensitive, as in git and rg: SECRET.ENV is not secret.env.
      fx.write({ "SECRET.ENV": "needle shouting\n" });
      assert.match(ok(await h.call("grep", { pattern: "needle shouting" })).results, /^SECRET\.ENV:1:/);
    });

    test(".git and node_modules are searched when the path names them", async () => {
      const h = await host();
      assert.equal(
        ok(await h.call("grep", { pattern: "needle", path: "node_modules" })).results,
        "node_modules/lib/index.js:1: module.exports = 'needle';",
      );
      assert.equal(
        ok(await h.call("grep", { pattern: "needle", path: ".git" })).results,
        ".git/config:1: [core] needle",
      );
    });

    test("denied substrings and the control plane never appear", async () => {
      const inner = makeFixture();
      try {
        inner.write({
          "ok.txt": "needle ok\n",
          "vault/key.txt": "needle vault\n",
          "agents.toml": "# needle in the config\n",
        });
        const state = path.join(inner.root, "latch-state");
        mkdirSync(state);
        writeFileSync(path.join(state, "notes.txt"), "needle in the state dir\n");
        const h = await inner.host({
          env,
          stateDir: state,
          config: undefined,
          configPath: path.join(inner.root, "agents.toml"),
        });
        assert.equal(
          ok(await h.call("grep", { pattern: "needle" })).results,
          "ok.txt:1: needle ok\nvault/key.txt:1: needle vault",
        );
        const denied = await inner.host({
          env,
          config: { toolsPolicies: { local_fs: { _denied_path_substrings: "vault" } }, agents: {} },
        });
        assert.equal(ok(await denied.call("grep", { pattern: "needle" })).results.includes("vault"), false);
        assert.equal((await denied.call("grep", { pattern: "needle", path: "vault" })).status, "refused");
      } finally {
        inner.cleanup();
      }
    });

    test("past the match cap: the first matches, how many more, and how to narrow", async () => {
      fx.write({ "many/a.txt": "hit\n".repeat(12), "many/b.txt": "hit\n".repeat(8) });
      // Far past the cap (below), rg stops counting and searches again in path order: rg answers both.
      fx.write(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`lots/f${i}.txt`, "hit\n".repeat(10)])));
      await settle();
      const { out, by } = await grep({ pattern: "hit", path: "many" }, { _max_grep_matches: "5" });
      assert.equal(by, engine);
      assert.equal(out.shown, 5);
      assert.equal(out.total_matches, 20);
      assert.equal(out.truncated, true);
      assert.equal(out.results.split("\n").length, 5);
      assert.match(
        out.note ?? "",
        /Showing 5 of 20 matching lines; the match cap \(_max_grep_matches = 5\) was reached, and 15 more matched\. Narrow the search/,
      );
      // Far past the cap the search stops counting, and says the count is a floor.
      const { out: far, by: farBy } = await grep({ pattern: "hit", path: "lots" }, { _max_grep_matches: "3" });
      assert.equal(farBy, engine);
      assert.equal(far.shown, 3);
      assert.ok(far.total_matches >= 30 && far.total_matches < 1000, String(far.total_matches));
      assert.match(far.note ?? "", /at least \d+ more matched before the search stopped counting/);
    });

    test("a 50 MB single-line file does not blow the output cap; long lines are cut around the match", async () => {
      const big = Buffer.alloc(50 * 1024 * 1024, "a");
      Buffer.from("needle").copy(big, 30 * 1024 * 1024);
      fx.write({ "huge/one-line.txt": big });
      await settle(); // rg's own answer: its events for one 50 MB line arrive in many pieces
      const r = await (await host({ _max_output_bytes: "4096" })).call("grep", { pattern: "needle", path: "huge" });
      const out = ok(r);
      assert.equal((r as { display?: { engine: string } }).display?.engine, engine);
      assert.ok(Buffer.byteLength(JSON.stringify(r)) < 4096, `result is ${Buffer.byteLength(JSON.stringify(r))} bytes`);
      assert.equal(out.total_matches, 1);
      assert.match(out.results, /^huge\/one-line\.txt:1: \[… \d+ chars cut\] a+needlea+ \[… \d+ chars cut\]$/);
    });

    test("the output byte limit cuts whole lines and says so", async () => {
      fx.write({
        "wide/a.txt": Array.from({ length: 100 }, (_, i) => `hit ${i} ${"z".repeat(100)}`).join("\n") + "\n",
      });
      const out = ok(await (await host({ _max_output_bytes: "2048" })).call("grep", { pattern: "hit", path: "wide" }));
      assert.ok(out.shown > 0 && out.shown < 100);
      assert.equal(out.total_matches, 100);
      assert.match(out.note ?? "", /output limit \(_max_output_bytes = 2048\) was reached/);
    });

    test("progress is reported, and an aborted search leaves no rg process behind", async () => {
      fx.write(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`slow/f${i}.txt`, "needle\n".repeat(50)])));
      await settle(); // else the tree changed just now, and rg is not asked
      const h = await host();
      const seen: string[] = [];
      const ctl = new AbortController();
      let runningAtAbort = -1;
      const r = await h.call(
        "grep",
        { pattern: "needle", path: "slow" },
        {
          signal: ctl.signal,
          onProgress: (p) => {
            seen.push(p.message ?? "");
            if (!ctl.signal.aborted) {
              runningAtAbort = rgChildren().length;
              ctl.abort();
            }
          },
        },
      );
      assert.ok(seen.length >= 1);
      assert.match(seen[0], /searching slow/);
      assert.equal(expectError(r).code, "ECANCELED");
      if (engine === "rg") assert.equal(runningAtAbort, 1, "rg was running when the call aborted");
      assert.deepEqual(rgChildren(), []);
    });

    // Last: each writes, and a tree written to within 2 s is searched again by the JS engine.
    if (engine === "rg") {
      test("a tree changed within 2 s is searched by latch's own walk, which answers alike", async () => {
        // rg reads by name: what it found in a folder that changed meanwhile (a line, a count, a binary
        // match, or a file it missed) could tell of another place by that name (reviews g60, g61).
        fx.write({ "recount/many.txt": "qzsame\n".repeat(5), "recount/blob.bin": Buffer.from("\0\nqzsame\n") });
        const args = { pattern: "qz.ame", regex: true, path: "recount" };
        const policies = { _max_grep_matches: "2" };
        const again = await grep(args, policies);
        assert.equal(again.by, "js");
        await standStill();
        const steady = await grep(args, policies);
        assert.equal(steady.by, "rg");
        for (const { out } of [again, steady]) {
          assert.equal(out.total_matches, 5);
          assert.equal(out.shown, 2);
          assert.equal(out.binary_files_skipped, 1);
        }
      });

      test("a folder below that changed is seen by the walk after rg, and latch answers instead", async () => {
        await standStill();
        // The root stands still (so rg is asked); odd-names, made in before(), changes now. No match is
        // there, so no file rg names leads through it: only the walk after rg can see it changed (what
        // rg did not find there could have been elsewhere).
        fx.write({ "odd-names/later.txt": "nothing to find\n" });
        const { out, by } = await grep({ pattern: "needle public" });
        assert.equal(by, "js");
        assert.equal(out.results, "pkg/nested/public.txt:1: needle public");
      });

      test("a tree changed while rg ran, and a pattern JavaScript cannot read: an error that says why and when to retry", async () => {
        fx.write({ "unmatched/blob.bin": Buffer.from("\0\nqzinline\n") });
        // `(?i)` is rg's inline flag; JavaScript has none.
        const args = { pattern: "(?i)QZINLINE", regex: true, path: "unmatched" };
        const e = expectError(await (await host()).call("grep", args));
        assert.equal(e.code, "EINVAL");
        assert.match(
          e.message,
          /^The folder `[^`]+` changed in the last few seconds \(before or while ripgrep searched\), so latch searched without ripgrep, and JavaScript cannot read `pattern` \(Expected `pattern` to be a valid regular expression/,
        );
        assert.match(e.message, /Retry once the folder has stood still for a few seconds/);
        await standStill();
        const { out, by } = await grep(args);
        assert.equal(by, "rg");
        assert.equal(out.binary_files_skipped, 1);
      });
    }
  });
}
