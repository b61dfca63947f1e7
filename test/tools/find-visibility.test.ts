// find_files over rg confirms each listed name through folders opened from their parents' descriptors
// and applies the visibility rule alone (the lookup's lstat is the link check): issue 32. It must hide
// exactly what the found-entry check hid: gitignored, quarantined, always_deny, deny_paths, denied
// substrings, the control plane, links, a pipe, at any depth; and a folder swapped for a link to
// outside after rg listed it shows no outside name, even when its parent's descriptor is held.
// Where no folder on a name's way changed since before rg started (a steady folder: confirm.ts), rg's
// listing stands without a lookup of each name; a folder swapped for a link and back, or a file swapped
// for a link, while rg ran, is not steady, and each of its names is looked up again.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, renameSync, rmSync, statfsSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { BeneathLookup, STEADY_FS, STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
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

describe("find_files over rg hides what the found-entry check hid", () => {
  let fx: Fixture;
  const host = (engine: string) => lockedHost(fx, engine);
  before(() => {
    fx = makeFixture();
    buildHostile(fx);
  });
  after(() => fx.cleanup());

  test("gitignored, quarantined, always_deny, deny_paths, denied substrings, links and a pipe: the same set through both engines", async () => {
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

  test("a folder swapped for a link to outside after rg listed it: no outside name, parents held or not", () => {
    const lookup = new BeneathLookup(fx.root);
    try {
      // The lookup now holds a/b/c/d and each folder above it, by descriptor.
      assert.equal(lookup.isFile("a/b/c/d/mid.ts"), true);
      renameSync(path.join(fx.root, "a", "b", "c", "d"), path.join(fx.root, "a", "b", "c", "moved"));
      symlinkSync(path.join(fx.base, "outside"), path.join(fx.root, "a", "b", "c", "d"));
      // A folder below the swapped one, opened through the held parent chain: the link is not followed.
      assert.equal(lookup.isFile("a/b/c/d/deep/stolen.ts"), false);
      const fresh = new BeneathLookup(fx.root);
      try {
        assert.equal(fresh.isFile("a/b/c/d/deep/stolen.ts"), false);
        assert.equal(fresh.isFile("a/b/c/d/mid.ts"), false);
        assert.equal(fresh.isFile("a/b/c/moved/mid.ts"), true);
        assert.equal(fresh.isFile("a/b/c/escape/stolen.ts"), false);
        assert.equal(fresh.isFile("a/b/c/d/inner-link.ts"), false);
      } finally {
        fresh.close();
      }
    } finally {
      lookup.close();
    }
  });
});

/**
 * A time after every ctime stamped so far under `dir`'s filesystem, that every change made from now on
 * is stamped at or after: a probe's ctime is moved until the filesystem's clock passes it (a coarse
 * clock lags the fine one by a tick; an ext4 inode of 128 bytes stamps whole seconds).
 */
async function stampedAfterNow(dir: string): Promise<number> {
  const probe = path.join(dir, "ctime-probe");
  writeFileSync(probe, "");
  const t = Date.now() + 1;
  for (let i = 0; i < 400 && statSync(probe).ctimeMs <= t; i++) {
    await sleep(5);
    chmodSync(probe, i % 2 ? 0o644 : 0o600);
  }
  assert.ok(statSync(probe).ctimeMs > t, "the filesystem's ctimes did not pass the clock within 2 s");
  return t;
}

describe("find_files over rg in steady folders: rg's listing stands where nothing moved while it ran", () => {
  let fx: Fixture;
  before(() => {
    fx = makeFixture();
    buildHostile(fx);
  });
  after(() => fx.cleanup());

  test("on a tree older than the margin, the same set and hidden count as the in-process walk", async () => {
    // The tree must have stood still for STEADY_MARGIN_MS before the call's rg starts.
    const newest = statSync(path.join(fx.root, "a", "b", "c", "d")).ctimeMs;
    const wait = newest + STEADY_MARGIN_MS + 50 - Date.now();
    if (wait > 0) await sleep(wait);
    const rg = ok(await (await lockedHost(fx, "rg")).call("find_files", { pattern: "*.ts" }));
    const js = ok(await (await lockedHost(fx, "js")).call("find_files", { pattern: "*.ts" }));
    assert.deepEqual(rg.matches, SHOWN);
    assert.deepEqual(js.matches, SHOWN);
    assert.equal(rg.hidden, 6);
    assert.equal(js.hidden, 6);
    // rg started in a subfolder: the folders above it are judged too.
    const sub = ok(await (await lockedHost(fx, "rg")).call("find_files", { pattern: "*.ts", path: "a/b/c" }));
    assert.deepEqual(
      sub.matches,
      SHOWN.filter((m) => m.startsWith("a/b/c/")),
    );
  });

  test("a folder swapped for a link to outside and back while rg ran, a file swapped for a link, a folder above changed: each name looked up", async () => {
    const since = await stampedAfterNow(fx.base);
    const d = path.join(fx.root, "a", "b", "c", "d");
    // What rg would have listed while `d` led outside: outside/deep/stolen.ts as a/b/c/d/deep/stolen.ts.
    renameSync(d, d + "-away");
    symlinkSync(path.join(fx.base, "outside"), d);
    rmSync(d);
    renameSync(d + "-away", d);
    // A file swapped for a link to outside in a folder that stood still until now.
    const many0 = path.join(fx.root, "x", "y", "z", "many0.ts");
    rmSync(many0);
    symlinkSync(path.join(fx.base, "outside", "deep", "stolen.ts"), many0);
    // An entry made and removed in pkg: pkg/nested itself did not change, but the way to it did.
    writeFileSync(path.join(fx.root, "pkg", "brief.ts"), "");
    rmSync(path.join(fx.root, "pkg", "brief.ts"));
    const lookup = new BeneathLookup(fx.root, since);
    try {
      assert.equal(lookup.listedFile("pkg/nested/listed-by-rg.ts"), false); // looked up: no such file
      assert.equal(lookup.listedFile("a/b/c/d/deep/stolen.ts"), false);
      assert.equal(lookup.listedFile("a/b/c/d/mid.ts"), true); // looked up: it is there
      assert.equal(lookup.listedFile("x/y/z/many0.ts"), false); // looked up: a link now
      assert.equal(lookup.listedFile("x/y/z/many1.ts"), true);
    } finally {
      lookup.close();
    }
  });

  test("in a folder that stood still, a listed name is not looked up again (off the trusted filesystems, it is)", async () => {
    const since = await stampedAfterNow(fx.base);
    const lookup = new BeneathLookup(fx.root, since);
    const trusted = STEADY_FS.has(Number(statfsSync(fx.root).type));
    try {
      // pkg/nested holds no such file: only a lookup can tell, and a steady folder's listing is not looked up.
      assert.equal(lookup.listedFile("pkg/nested/listed-by-rg.ts"), trusted);
      assert.equal(lookup.listedFile("pkg/nested/public.ts"), true);
      // Without a time before rg (the grep engine's use), every name is looked up.
      const plain = new BeneathLookup(fx.root);
      try {
        assert.equal(plain.listedFile("pkg/nested/listed-by-rg.ts"), false);
      } finally {
        plain.close();
      }
    } finally {
      lookup.close();
    }
  });
});
