// Review g64: the browse tools' first look at their path (statTarget: stat_file, list_dir,
// find_files, count_stats, the ast tools) followed links. A folder swapped for a link to outside
// after the path was resolved made it tell whether an outside path existed, and whether it was a
// file or a folder. It now looks through the walk (beneath.ts), which follows no link.
import assert from "node:assert/strict";
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { statTarget } from "../../src/browse/target.js";
import type { ResolvedPath } from "../../src/fs/paths.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

test("attack: a folder swapped for a link to outside after the resolve tells nothing of outside", async () => {
  const outside = path.join(fx.base, "outside");
  mkdirSync(path.join(outside, "secret-folder"), { recursive: true });
  writeFileSync(path.join(outside, "secret-file"), "x\n");
  fx.write({ "d/secret-folder/keep": "in\n", "d/secret-file": "in\n" });
  const target = (rel: string) => ({ abs: path.join(fx.root, rel), rel, input: rel }) as ResolvedPath;
  // Resolved while `d` is the workspace's folder: both are what they seem.
  assert.ok((await statTarget(target("d/secret-folder"))).isDirectory());
  assert.ok((await statTarget(target("d/secret-file"))).isFile());
  renameSync(path.join(fx.root, "d"), path.join(fx.root, "d.away"));
  symlinkSync(outside, path.join(fx.root, "d"));
  for (const rel of ["d/secret-folder", "d/secret-file", "d/missing"]) {
    await assert.rejects(statTarget(target(rel)), (err: Error) => {
      // The same answer whatever is (or is not) at the outside path: the folder is a link now.
      assert.match(err.message, /^The folder `d` changed while reading \(it is now a link\)/, rel);
      return true;
    });
  }
});

test("attack: the path itself swapped for a link after the resolve is refused, not looked through", async () => {
  const outside = path.join(fx.base, "outside2");
  mkdirSync(outside, { recursive: true });
  fx.write({ "e/inside": "in\n" });
  const e = { abs: path.join(fx.root, "e"), rel: "e", input: "e" } as ResolvedPath;
  assert.ok((await statTarget(e)).isDirectory());
  renameSync(path.join(fx.root, "e"), path.join(fx.root, "e.away"));
  symlinkSync(outside, path.join(fx.root, "e"));
  await assert.rejects(statTarget(e), /^Refusal: The folder `e` changed while reading \(it is now a link\)/);
});

test("a missing path is the error that names the fix; the root is a folder", async () => {
  const target = (rel: string) => ({ abs: path.join(fx.root, rel), rel, input: rel }) as ResolvedPath;
  await assert.rejects(
    statTarget(target("nope/x")),
    /`nope\/x` does not exist\. Check the name with list_dir or find_files\./,
  );
  assert.ok((await statTarget({ abs: fx.root, rel: ".", input: "." } as ResolvedPath)).isDirectory());
});
