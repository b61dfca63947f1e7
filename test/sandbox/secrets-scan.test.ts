// The workspace walk behind the secret masks (src/sandbox/secrets.ts): what it finds, and that its
// kept listings never hide a change: a secret added, renamed into place or removed between two walks,
// right after a walk (the same clock tick), deep in the tree, is seen by the next walk.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, describe, test } from "node:test";
import { scanWorkspace } from "../../src/sandbox/secrets.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-scan-");
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const rel = (ps: string[]) => ps.map((p) => path.relative(fx.root, p)).sort();

describe("the workspace secrets walk", () => {
  after(() => fx.cleanup());

  test("finds quarantined files and folders at any depth, names with spaces, and nested .git entries", () => {
    fx.write({
      ".env": "x",
      ".env.example": "public",
      "a/b/c/.env.production": "x",
      "certs/my server.pem": "x",
      "deploy/.ssh/id_rsa": "x",
      "src/index.ts": "x",
      "node_modules/pkg/test/key.pem": "package fixture",
      ".venv/lib/python3.12/site-packages/certifi/cacert.pem": "package's CA bundle",
      ".venv/lib/python3.12/site-packages/pkg/.git/config": "not walked",
      "vendor/lib/.git/config": "x",
      "sub/.git": "gitdir: ../.git/modules/sub",
      ".git/config": "x",
      ".git/x.key": "not walked",
    });
    symlinkSync(path.join(fx.root, "a"), path.join(fx.root, "link-to-a"));
    writeFileSync(path.join(fx.base, ".env"), "outside");
    symlinkSync(path.join(fx.base, ".env"), path.join(fx.root, "settings.txt"));
    const scan = scanWorkspace(fx.root);
    assert.deepEqual(rel(scan.secrets), [
      ".env",
      "a/b/c/.env.production",
      "certs/my server.pem",
      "deploy/.ssh",
      "settings.txt",
    ]);
    assert.deepEqual(rel(scan.gitDirs), ["vendor/lib/.git"]);
    assert.deepEqual(rel(scan.gitFiles), ["sub/.git"]);
  });

  test("a kept listing is read again when its folder's mtime changes", () => {
    const c = path.join(fx.root, "a/b/c");
    const old = new Date(Date.now() - 10_000);
    for (const d of [fx.root, path.join(fx.root, "a"), path.join(fx.root, "a/b"), c]) utimesSync(d, old, old);
    const before = rel(scanWorkspace(fx.root).secrets); // every listing is old: kept and trusted
    writeFileSync(path.join(c, "new.key"), "x");
    assert.deepEqual(rel(scanWorkspace(fx.root).secrets), [...before, "a/b/c/new.key"].sort());
    renameSync(path.join(c, "new.key"), path.join(fx.root, "a/b/renamed.pem"));
    mkdirSync(path.join(fx.root, "a/b/d/e"), { recursive: true });
    writeFileSync(path.join(fx.root, "a/b/d/e/.npmrc"), "x");
    assert.deepEqual(rel(scanWorkspace(fx.root).secrets), [...before, "a/b/d/e/.npmrc", "a/b/renamed.pem"].sort());
    rmSync(path.join(fx.root, "a/b/d"), { recursive: true });
    rmSync(path.join(fx.root, "a/b/renamed.pem"));
    assert.deepEqual(rel(scanWorkspace(fx.root).secrets), before);
  });

  test("a change in the same clock tick as the walk (the mtime unchanged) is still seen", () => {
    const c = path.join(fx.root, "a/b/c");
    // The folder changed just before the walk, so its listing is racy. On a loaded machine the walk can
    // start later than that; then the setup is tried again, since a late walk is not the case tested.
    const racyWalk = () => {
      for (let tries = 1; ; tries++) {
        const now = new Date();
        utimesSync(c, now, now);
        const secrets = rel(scanWorkspace(fx.root).secrets);
        if (Date.now() - now.getTime() < 40) return { now, before: secrets };
        assert.ok(tries < 100, "the walk never ran within 40 ms of the change");
      }
    };
    const { now, before } = racyWalk();
    writeFileSync(path.join(c, "same-tick.key"), "x");
    utimesSync(c, now, now); // as a coarse clock would leave it: the same mtime as the walk saw
    assert.deepEqual(rel(scanWorkspace(fx.root).secrets), [...before, "a/b/c/same-tick.key"].sort());
    rmSync(path.join(c, "same-tick.key"));
  });

  test("a folder replaced by a link is not followed; what it pointed to is walked where it is", () => {
    renameSync(path.join(fx.root, "a"), path.join(fx.root, "moved"));
    symlinkSync(path.join(fx.base), path.join(fx.root, "a"));
    writeFileSync(path.join(fx.base, "outside.pem"), "x");
    const found = rel(scanWorkspace(fx.root).secrets);
    assert.ok(found.includes("moved/b/c/.env.production"), found.join(","));
    assert.ok(!found.some((f) => f.startsWith("a/") || f.startsWith("..")), found.join(","));
  });

  test("attack: links that send Node's JS realpath round forever (f -> q/f, q -> sub/.., sub -> d/x) end the walk and the masks", () => {
    // Node's JS realpathSync takes `sub/..` on paper and comes back to `f`: it looped forever, and the
    // walk runs before every call's answer. A `.env` so made is also a secret the masks resolve.
    const at = path.join(fx.base, "loops");
    mkdirSync(path.join(at, "d", "x"), { recursive: true });
    writeFileSync(path.join(at, "d", "f"), "x");
    writeFileSync(path.join(at, "d", ".env"), "x");
    symlinkSync("d/x", path.join(at, "sub"));
    symlinkSync("sub/..", path.join(at, "q"));
    symlinkSync("q/f", path.join(at, "f"));
    symlinkSync("q/.env", path.join(at, ".env"));
    // In a child process: a loop here would never give the test's own timer a turn.
    const dist = (m: string) => JSON.stringify(pathToFileURL(path.join(repo, "dist/sandbox", m)).href);
    const script = `
      import { scanWorkspace } from ${dist("secrets.js")};
      import { secretMounts } from ${dist("masks.js")};
      const scan = scanWorkspace(process.argv[1]);
      secretMounts(scan.secrets);
      console.log(JSON.stringify(scan.secrets.map((s) => s.slice(process.argv[1].length + 1)).sort()));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, at], {
      timeout: 20_000,
      encoding: "utf8",
    });
    assert.equal(r.signal, null, "the walk ended (not killed at 20 s)");
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [".env", "d/.env"]);
  });
});
