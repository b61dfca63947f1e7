// find_files over a hostile tree under a locked-down rule (issue 32): it must hide exactly what the
// found-entry check hides: gitignored, quarantined, always_deny, deny_paths, denied substrings, the
// control plane, links, a pipe, at any depth, under each LATCH_GREP_ENGINE setting (find_files walks
// either way). A folder swapped for a link to outside shows no outside name. On a tree its host's
// folder index holds (src/browse/find-index.ts), a folder swapped for a link to outside and back, a
// file swapped for a link, and a folder above changed, between two calls, are each seen by the next.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import type { CallResult } from "../../src/host/types.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { lockedHost as visibilityHost } from "./browse-fixture.js";

type Found = { matches: string[]; count: number; hidden?: number };
const ok = (r: CallResult): Found => {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return expectOk<Found>(r).result;
};

/** Every file the rule lets through, sorted as find_files sorts. */
const SHOWN = [
  "a/b/c/d/e/deep.ts",
  "a/b/c/d/e/f/deeper.ts",
  "a/b/c/d/mid.ts",
  "a/top.ts",
  "keep.ts",
  "pkg/keep.gen.ts",
  "pkg/nested/public.ts",
  "x/y/z/many0.ts",
  "x/y/z/many1.ts",
  "x/y/z/many2.ts",
  "x/y/z/many3.ts",
  "x/y/z/many4.ts",
];

/** The locked-down host of these tests over `fx`, with the engine asked for. */
const lockedHost = (fx: Fixture, engine: string) => visibilityHost(fx, engine, { _max_find_results: "1000" });

/** The hostile tree: every entry of SHOWN, and beside them what the rule or the lookup must leave out. */
function buildHostile(fx: Fixture): void {
  const files: Record<string, string> = {
    ".gitignore": "build/\n*.log.ts\n",
    "pkg/.gitignore": "*.gen.ts\n!keep.gen.ts\n",
    "pkg/skip.gen.ts": "x\n",
    "build/out.ts": "x\n",
    "a/b/c/d/noise.log.ts": "x\n",
    "a/b/c/.env.ts": "x\n", // the quarantine: `.env.[!e]*`
    "a/b/c/d/e/id_rsa.ts": "x\n",
    "a/b/c/d/e/f/private/inner.ts": "x\n",
    "a/b/.ssh/config.ts": "x\n",
    "vault/v.ts": "x\n",
    "a/secretstuff/s.ts": "x\n",
    "a/b/c/d/e/f/server.pem.ts": "x\n", // the name does not end in .pem: shown
  };
  for (const f of SHOWN) files[f] = "x\n";
  fx.write(files);
  // Links (to a file and a folder, inside and out) and a pipe are no files to list.
  mkdirSync(path.join(fx.base, "outside", "deep"), { recursive: true });
  writeFileSync(path.join(fx.base, "outside", "deep", "stolen.ts"), "x\n");
  symlinkSync(path.join(fx.base, "outside", "deep"), path.join(fx.root, "a", "b", "c", "escape"));
  symlinkSync(path.join(fx.root, "keep.ts"), path.join(fx.root, "a", "b", "c", "d", "inner-link.ts"));
  execFileSync("mkfifo", [path.join(fx.root, "a", "b", "c", "d", "pipe.ts")]);
}
SHOWN.push("a/b/c/d/e/f/server.pem.ts");
SHOWN.sort((p, q) => (p < q ? -1 : 1));

describe("find_files hides what the found-entry check hides", () => {
  let fx: Fixture;
  const host = (engine: string) => lockedHost(fx, engine);
  before(() => {
    fx = makeFixture();
    buildHostile(fx);
  });
  after(() => fx.cleanup());

  test("gitignored, quarantined, always_deny, deny_paths, denied substrings, links and a pipe: the same set under LATCH_GREP_ENGINE=rg and js", async () => {
    const rg = ok(await (await host("rg")).call("find_files", { pattern: "*.ts" }));
    const js = ok(await (await host("js")).call("find_files", { pattern: "*.ts" }));
    assert.deepEqual(rg.matches, SHOWN);
    assert.equal(rg.count, SHOWN.length);
    assert.deepEqual(js.matches, SHOWN);
    // Hidden, counted, never named: .env.ts, id_rsa.ts, private/, .ssh/, vault/, secretstuff/.
    assert.equal(rg.hidden, 6);
    assert.equal(js.hidden, rg.hidden);
    const sub = ok(await (await host("rg")).call("find_files", { pattern: "*.ts", path: "a/b/c" }));
    assert.deepEqual(
      sub.matches,
      SHOWN.filter((m) => m.startsWith("a/b/c/")),
    );
  });

  test("a folder swapped for a link to outside: no outside name, and the link itself refused as a path", async () => {
    const hosts = [await host("rg"), await host("js")];
    for (const h of hosts) ok(await h.call("find_files", { pattern: "*.ts" })); // each host's index warmed
    renameSync(path.join(fx.root, "a", "b", "c", "d"), path.join(fx.root, "a", "b", "c", "moved"));
    symlinkSync(path.join(fx.base, "outside"), path.join(fx.root, "a", "b", "c", "d"));
    const want = SHOWN.map((m) => m.replace(/^a\/b\/c\/d\//, "a/b/c/moved/")).sort((p, q) => (p < q ? -1 : 1));
    for (const h of hosts) {
      const all = ok(await h.call("find_files", { pattern: "*" }));
      assert.deepEqual(
        all.matches.filter((m) => m.endsWith(".ts")),
        want,
      );
      assert.doesNotMatch(JSON.stringify(all), /stolen/);
      assert.equal(ok(await h.call("find_files", { pattern: "stolen.ts" })).count, 0);
      assert.equal((await h.call("find_files", { pattern: "*", path: "a/b/c/d" })).status, "refused");
    }
  });
});

describe("find_files on a tree its host's index holds: a change between two calls is seen by the next", () => {
  let fx: Fixture;
  let h: Awaited<ReturnType<typeof lockedHost>>;
  before(() => {
    fx = makeFixture();
    buildHostile(fx);
  });
  after(() => fx.cleanup());

  test("on a tree older than the margin, the answer from kept folders is the fresh walk's", async () => {
    // A folder is kept only if it stood still for STEADY_MARGIN_MS before it was listed (find-index.ts).
    const newest = statSync(path.join(fx.root, "a", "b", "c", "d")).ctimeMs;
    const wait = newest + STEADY_MARGIN_MS + 50 - Date.now();
    if (wait > 0) await sleep(wait);
    h = await lockedHost(fx, "rg");
    for (let i = 0; i < 2; i++) {
      const all = ok(await h.call("find_files", { pattern: "*.ts" }));
      assert.deepEqual(all.matches, SHOWN);
      assert.equal(all.hidden, 6);
      // Started in a subfolder: the folders above it count too.
      const sub = ok(await h.call("find_files", { pattern: "*.ts", path: "a/b/c" }));
      assert.deepEqual(
        sub.matches,
        SHOWN.filter((m) => m.startsWith("a/b/c/")),
      );
    }
  });

  test("a folder swapped for a link to outside and back, a file swapped for a link, a folder above changed: each seen", async () => {
    const d = path.join(fx.root, "a", "b", "c", "d");
    // While `d` led outside, a walk by name would have found outside/deep/stolen.ts as a/b/c/d/deep/stolen.ts.
    renameSync(d, d + "-away");
    symlinkSync(path.join(fx.base, "outside"), d);
    rmSync(d);
    renameSync(d + "-away", d);
    // A file swapped for a link to outside in a folder the index holds.
    const many0 = path.join(fx.root, "x", "y", "z", "many0.ts");
    rmSync(many0);
    symlinkSync(path.join(fx.base, "outside", "deep", "stolen.ts"), many0);
    // An entry made and removed in pkg: pkg/nested itself did not change, but the way to it did.
    writeFileSync(path.join(fx.root, "pkg", "brief.ts"), "");
    rmSync(path.join(fx.root, "pkg", "brief.ts"));
    const want = SHOWN.filter((m) => m !== "x/y/z/many0.ts");
    for (const host of [h, await lockedHost(fx, "js")]) {
      const all = ok(await host.call("find_files", { pattern: "*" }));
      assert.deepEqual(
        all.matches.filter((m) => m.endsWith(".ts")),
        want,
      );
      assert.equal(all.hidden, 6);
      assert.doesNotMatch(JSON.stringify(all), /stolen/);
    }
  });
});
