// find_files has one engine, the in-process walk (src/browse/find.ts): LATCH_GREP_ENGINE picks grep's
// engine and changes nothing of find_files. Under each setting it starts no rg, gives the same answers
// on the shared tree, and the same refusals under attack (a gitignored secret, links out of the root,
// the control plane, denied substrings, a pipe); a cancelled call stops.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { allDefinitions, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { visibilityRule } from "../../src/policy/visibility.js";
import { makeFoundCheck } from "../../src/browse/visible.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { rgPath } from "@vscode/ripgrep";
import { spawnRg } from "../../src/browse/rg-log.js";
import { buildTree, rgChildren, rgSpawnedDuring } from "./browse-fixture.js";
import { expectError, expectOk } from "../helpers/expect.js";

type Found = { matches: string[]; count: number; truncated: boolean };

function ok(r: CallResult): Found {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return expectOk<Found>(r).result;
}

/** LATCH_GREP_ENGINE's settings: grep's rg engine, its JS engine, and unset (rg for grep). */
const ENGINES = ["rg", "js", ""] as const;
const setting = (engine: string) => (engine === "" ? "LATCH_GREP_ENGINE unset" : `LATCH_GREP_ENGINE=${engine}`);

describe("find_files: the walk, whatever LATCH_GREP_ENGINE says", () => {
  let fx: Fixture;
  const host = (engine: string, policies: Record<string, string> = {}) =>
    fx.host({
      env: engine === "" ? {} : { LATCH_GREP_ENGINE: engine },
      config: { toolsPolicies: { local_fs: { _max_find_results: "100000", ...policies } }, agents: {} },
    });
  before(() => {
    fx = makeFixture();
    buildTree(fx);
    // Outside the root, reached only through a link to a folder and a link to a file below it.
    mkdirSync(path.join(fx.base, "outside", "deep"), { recursive: true });
    writeFileSync(path.join(fx.base, "outside", "deep", "stolen.ts"), "x\n");
    symlinkSync(path.join(fx.base, "outside", "deep"), path.join(fx.root, "src", "deep-escape"));
    symlinkSync(path.join(fx.base, "outside", "deep", "stolen.ts"), path.join(fx.root, "src", "stolen.ts"));
    symlinkSync(path.join(fx.root, "src", "deep"), path.join(fx.root, "src", "inner-dir-link"));
    fx.write({ [`odd/new\nline.txt`]: "x\n", "odd/space name.txt": "x\n", "odd/.hidden.txt": "x\n" });
    execFileSync("mkfifo", [path.join(fx.root, "odd", "pipe.txt")]);
  });
  after(() => fx.cleanup());

  test("no setting makes find_files start rg", async () => {
    // The probe sees the spawn rg-log.ts makes (grep's rg engine spawns rg only in a tree that stood still).
    const probe = await rgSpawnedDuring(async () => {
      const { child, stdout, log } = spawnRg(rgPath, ["--version"], fx.root);
      stdout.resume();
      await new Promise((r) => child.once("close", r));
      log.close();
    });
    assert.equal(probe.rg.length, 1, "the probe sees an rg spawned");
    for (const engine of ENGINES) {
      const h = await host(engine);
      for (const args of [{ pattern: "*.ts" }, { pattern: "*", path: "src" }, { pattern: "nothing-matches" }]) {
        const { value: r, rg } = await rgSpawnedDuring(() => h.call("find_files", args));
        assert.equal(r.status, "ok", JSON.stringify(r));
        assert.deepEqual(rg, [], `${setting(engine)} ${JSON.stringify(args)}: rg started`);
        assert.equal((r as { display?: unknown }).display, undefined, "no engine to show");
      }
    }
  });

  test("every setting gives the same sorted answer for base-name globs, path globs and subfolders", async () => {
    const rg = await host("rg");
    const js = await host("js");
    const unset = await host("");
    const cases = [
      { pattern: "*" },
      { pattern: "*.ts" },
      { pattern: "*.txt" },
      { pattern: "src/**/*.ts" },
      { pattern: "**/*.gen.ts" },
      { pattern: "*.ts", path: "src" },
      { pattern: "deep/*", path: "src" },
      { pattern: "*", path: "pkg" },
      { pattern: "*", path: "pkg/nested" },
      { pattern: "*", path: "node_modules" },
      { pattern: "*", path: ".git" },
      { pattern: "*", path: "build" },
      { pattern: "*", path: "pkg/nested/private" },
      { pattern: "*.txt", path: "odd" },
    ];
    for (const args of cases) {
      const a = ok(await rg.call("find_files", args));
      assert.deepEqual(ok(await js.call("find_files", args)), a, JSON.stringify(args));
      assert.deepEqual(ok(await unset.call("find_files", args)), a, JSON.stringify(args));
    }
    const all = ok(await rg.call("find_files", { pattern: "*" })).matches;
    assert.ok(
      all.includes("pkg/keep.gen.ts") &&
        all.includes("src/deep/c.ts") &&
        all.includes("odd/new\\nline.txt") && // shown escaped (showName)
        all.includes("odd/.hidden.txt"),
      all.join(" | "),
    );
    assert.deepEqual(
      ok(await rg.call("find_files", { pattern: "*", path: "build" })).matches,
      [],
      "an ignored folder is never entered",
    );
    assert.deepEqual(ok(await rg.call("find_files", { pattern: "*", path: "node_modules" })).matches, [
      "node_modules/lib/index.js",
    ]);
  });

  for (const engine of ENGINES) {
    test(`${setting(engine)}: a gitignored secret, links (out of the root or in), .git, node_modules and a pipe are never listed`, async () => {
      const h = await host(engine);
      const all = ok(await h.call("find_files", { pattern: "*" })).matches;
      for (const hidden of [
        "secret.env",
        "build/out.js",
        "app.log",
        "pkg/skip.gen.ts",
        "pkg/nested/private/key.txt",
        ".git/config",
        "node_modules/lib/index.js",
        "leak-link.txt",
        "inner-link.ts",
        "odd/pipe.txt",
      ]) {
        assert.equal(all.includes(hidden), false, `${setting(engine)} listed ${hidden}`);
      }
      assert.equal(
        all.some(
          (m) => m.includes("escape") || m.includes("stolen") || m.includes("leak") || m.includes("inner-dir-link"),
        ),
        false,
        all.join(" | "),
      );
      assert.equal(ok(await h.call("find_files", { pattern: "secret.env" })).count, 0);
      assert.equal(ok(await h.call("find_files", { pattern: "stolen.ts" })).count, 0);
      assert.equal((await h.call("find_files", { pattern: "*", path: "src/deep-escape" })).status, "refused");
    });

    test(`${setting(engine)}: the control plane (config, state dir) and denied substrings are never listed`, async () => {
      const inner = makeFixture();
      try {
        inner.write({
          "ok.txt": "x\n",
          "vault/key.txt": "x\n",
          "agents.toml": "# config\n",
          "deep/vault2/k.txt": "x\n",
        });
        const state = path.join(inner.root, "latch-state");
        mkdirSync(state);
        writeFileSync(path.join(state, "notes.txt"), "x\n");
        const env = engine === "" ? {} : { LATCH_GREP_ENGINE: engine };
        const h = await inner.host({
          env,
          stateDir: state,
          config: undefined,
          configPath: path.join(inner.root, "agents.toml"),
        });
        assert.deepEqual(ok(await h.call("find_files", { pattern: "*" })).matches, [
          "deep/vault2/k.txt",
          "ok.txt",
          "vault/key.txt",
        ]);
        assert.equal(ok(await h.call("find_files", { pattern: "*.toml" })).count, 0);
        assert.equal((await h.call("find_files", { pattern: "*", path: "latch-state" })).status, "refused");
        const denied = await inner.host({
          env,
          config: { toolsPolicies: { local_fs: { _denied_path_substrings: "vault" } }, agents: {} },
        });
        const shown = ok(await denied.call("find_files", { pattern: "*.txt" })).matches;
        assert.equal(
          shown.some((m) => m.includes("vault")),
          false,
          shown.join(" | "),
        );
      } finally {
        inner.cleanup();
      }
    });
  }

  test("the found-entry check places the control plane against the root: holding it, beside it, inside it", () => {
    fx.write({ "src2/x.txt": "x\n" });
    const envelope = resolveEnvelope("auto_edit", allDefinitions({}));
    const rule = (controlPlane: string[]) =>
      visibilityRule({ root: fx.root, controlPlane, deniedSubstrings: [], envelope, tool: "find_files" });
    const shown = (plane: string[], rel: string) => makeFoundCheck(fx.root, rule(plane))(rel) !== undefined;
    assert.equal(shown([], "src/a.ts"), true);
    assert.equal(shown([fx.base], "src/a.ts"), false, "a control-plane folder that holds the root hides everything");
    assert.equal(shown([fx.root], "src/a.ts"), false);
    assert.equal(shown([path.join(fx.base, "state")], "src/a.ts"), true, "one beside the root hides nothing");
    assert.equal(shown([path.join(fx.root, "src")], "src/a.ts"), false);
    assert.equal(shown([path.join(fx.root, "src")], "src2/x.txt"), true, "by whole segments, not by prefix");
    assert.equal(shown([path.join(fx.root, "src", "a.ts")], "src/a.ts"), false);
    assert.equal(
      shown([path.join(fx.root, "src")], "docs/../src/a.ts"),
      false,
      "an unclean path takes the general test",
    );
    assert.equal(shown([], "inner-link.ts"), false, "a link is never shown");
  });

  test("LATCH_GREP_ENGINE=rg: a find_files cancelled mid-walk is ECANCELED, and no rg ran", async () => {
    fx.write(Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`many/d${i % 20}/f${i}.txt`, "x"])));
    const h = await host("rg");
    const ctl = new AbortController();
    let walked = 0;
    const { value: r, rg } = await rgSpawnedDuring(() =>
      h.call(
        "find_files",
        { pattern: "*.txt", path: "many" },
        {
          signal: ctl.signal,
          onProgress: (p) => {
            // The first report comes before the walk starts; abort on the first count from the walk.
            if (p.progress > 0 && !ctl.signal.aborted) {
              walked = p.progress;
              ctl.abort();
            }
          },
        },
      ),
    );
    assert.equal(expectError(r).code, "ECANCELED", JSON.stringify(r).slice(0, 300));
    assert.ok(walked > 0, "the walk was under way when the call aborted");
    assert.deepEqual(rg, []);
    assert.deepEqual(rgChildren(), []);
  });
});
