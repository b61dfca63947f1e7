// `npm run build` keeps dist/ when its inputs' digest is the one dist/ was built from
// (scripts/build.mjs): the digest must move with every change the build would see, and only then.
import assert from "node:assert/strict";
import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
// @ts-expect-error: a plain .mjs script without types
import { inputsDigest } from "../scripts/build-inputs.mjs";
import { makeFixture } from "./helpers/fixture.js";

const digest = (root: string): string => (inputsDigest as (r: string) => string)(root);

test("the build's input digest moves with every content, name and file the build reads, and not with times", () => {
  const fx = makeFixture("latch-build-inputs-");
  try {
    const r = fx.root;
    mkdirSync(path.join(r, "src/sub"), { recursive: true });
    writeFileSync(path.join(r, "src/a.ts"), "export const a = 1;\n");
    writeFileSync(path.join(r, "src/sub/b.ts"), "export const b = 2;\n");
    writeFileSync(path.join(r, "package.json"), "{}\n");
    writeFileSync(path.join(r, "package-lock.json"), "{}\n");
    const first = digest(r);
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(digest(r), first, "the same tree, the same digest");
    utimesSync(path.join(r, "src/a.ts"), new Date(), new Date(2030, 0, 1));
    assert.equal(digest(r), first, "a file touched, its bytes the same: nothing to build");
    // npm ci writes node_modules' own lockfile after its `prepare` build: the test's build then is current.
    mkdirSync(path.join(r, "node_modules"));
    writeFileSync(path.join(r, "node_modules/.package-lock.json"), "{}\n");
    assert.equal(digest(r), first, "node_modules' own lockfile is not an input");

    const seen = new Set([first]);
    const changes: [string, () => void][] = [
      ["a byte of a source", () => writeFileSync(path.join(r, "src/a.ts"), "export const a = 3;\n")],
      ["a source added", () => writeFileSync(path.join(r, "src/sub/c.ts"), "")],
      [
        "a source renamed, its bytes the same",
        () => renameSync(path.join(r, "src/sub/c.ts"), path.join(r, "src/sub/e.ts")),
      ],
      ["the lockfile changed", () => writeFileSync(path.join(r, "package-lock.json"), '{"v":2}\n')],
      [
        "a build script appeared",
        () => {
          mkdirSync(path.join(r, "scripts"));
          writeFileSync(path.join(r, "scripts/bundle.mjs"), "");
        },
      ],
      ["the lockfile removed", () => rmSync(path.join(r, "package-lock.json"))],
    ];
    for (const [what, change] of changes) {
      change();
      const now = digest(r);
      assert.ok(!seen.has(now), `${what}: the digest must change`);
      seen.add(now);
    }
  } finally {
    fx.cleanup();
  }
});
