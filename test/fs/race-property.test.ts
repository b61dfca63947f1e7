// Issue 26, as a property: for a random tree with symlinks (relative, absolute, to outside, chains,
// loops) and a real process swapping one of its folders with a link to outside, no sequence of file
// tools ever touches a path outside the root: nothing read from there (the marker planted in every
// outside file, and in the name of a file only the outside has, is in no result), nothing created,
// changed or removed there, no temp file left. The walks (list_dir, find_files, grep with ripgrep or
// the JS engine, count_stats, ast_search) run among the file tools.
// Runs: 10 by default, 150 with LATCH_STRESS=1.
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { makeFixture } from "../helpers/fixture.js";
import { makeOutside, snapshot, startSwapper, Tally, tempFiles } from "./race-fixture.js";

const RUNS = process.env.LATCH_STRESS === "1" ? 150 : 10;
const NAMES = ["a", "b", "c", "l1", "l2"] as const;
const name = fc.constantFrom(...NAMES);
const relPath = fc.array(name, { minLength: 1, maxLength: 3 }).map((p) => p.join("/"));

/** Where a link points: inside (relative or absolute), outside, another link (chains), itself (a loop). */
const linkTarget = fc.oneof(
  relPath.map((p) => ({ kind: "rel" as const, p })),
  relPath.map((p) => ({ kind: "abs" as const, p })),
  fc.constantFrom("", "sub", "x.txt", ".aws").map((p) => ({ kind: "outside" as const, p })),
  fc.constant({ kind: "self" as const, p: "" }),
);

const tree = fc.record({
  dirs: fc.array(relPath, { maxLength: 5 }),
  files: fc.array(relPath, { maxLength: 5 }),
  links: fc.array(fc.record({ at: relPath, to: linkTarget }), { minLength: 1, maxLength: 5 }),
});

const op = fc.oneof(
  relPath.map((p) => ({ tool: "read_file", args: { path: p, force: true } })),
  relPath.map((p) => ({ tool: "write_file", args: { path: `${p}/w.txt`, content: "MODEL\n" } })),
  relPath.map((p) => ({ tool: "write_file", args: { path: p, content: "MODEL\n" } })),
  relPath.map((p) => ({ tool: "create_directory", args: { path: `${p}/m` } })),
  fc.tuple(relPath, relPath).map(([a, b]) => ({ tool: "move_file", args: { from: a, to: `${b}/moved` }, reads: a })),
  relPath.map((p) => ({ tool: "delete_file", args: { path: p }, reads: p })),
  relPath.map((p) => ({ tool: "edit_file", args: { path: p, old_string: "inside", new_string: "MODEL" }, reads: p })),
  relPath.map((p) => ({
    tool: "apply_patch",
    args: { patch: `*** Begin Patch\n*** Add File: ${p}/p.txt\n+MODEL\n*** End Patch\n` },
  })),
  fc.oneof(fc.constant("."), relPath).map((p) => ({ tool: "list_dir", args: { path: p, recursive: true } })),
  fc.constant({ tool: "find_files", args: { pattern: "**/*" } }),
  fc.constantFrom("OUTSIDE", "inside").map((p) => ({ tool: "grep", args: { pattern: p } })),
  fc.oneof(fc.constant("."), relPath).map((p) => ({ tool: "count_stats", args: { path: p } })),
  fc.constant({ tool: "ast_search", args: { pattern: "const $X = $Y" } }),
);

test("no operation on a random tree with links and a racer touches a path outside the root", async () => {
  await fc.assert(
    fc.asyncProperty(
      tree,
      fc.array(op, { minLength: 4, maxLength: 16 }),
      fc.constantFrom("rg", "js"),
      async (spec, ops, engine) => {
        const fx = makeFixture("latch-race-prop-");
        try {
          const outside = makeOutside(fx.base);
          mkdirSync(path.join(outside.dir, "sub"));
          writeFileSync(path.join(outside.dir, "sub/x.txt"), `${outside.marker}\n`);
          // A name only the outside has (a walk that lists there shows it), as source (ast_search reads it).
          writeFileSync(path.join(outside.dir, `${outside.marker}.ts`), `const leak = "${outside.marker}";\n`);
          const at = (rel: string) => path.join(fx.root, rel);
          // Later entries may replace earlier ones, and an entry that cannot be made (a file on its
          // path) is left out: the tree is whatever the spec leaves.
          // A file on the way (ENOTDIR) is no link: make() then fails and leaves the entry out.
          const isLink = (abs: string) => {
            try {
              return lstatSync(abs, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
            } catch {
              return false;
            }
          };
          const viaLink = (rel: string) =>
            path
              .dirname(rel)
              .split("/")
              .some((_, i, segs) => isLink(at(segs.slice(0, i + 1).join("/"))));
          const make = (rel: string, fn: () => void) => {
            if (viaLink(rel)) return; // setting up must not reach outside either
            try {
              rmSync(at(rel), { recursive: true, force: true });
              mkdirSync(path.dirname(at(rel)), { recursive: true });
              fn();
            } catch {
              // ENOTDIR or ENOENT: a file or link in the way
            }
          };
          mkdirSync(at("a"));
          for (const d of spec.dirs) make(d, () => mkdirSync(at(d)));
          for (const f of spec.files) make(f, () => writeFileSync(at(f), "inside\n"));
          for (const { at: l, to } of spec.links) {
            const target =
              to.kind === "rel"
                ? path.relative(path.dirname(at(l)), at(to.p))
                : to.kind === "abs"
                  ? at(to.p)
                  : to.kind === "outside"
                    ? path.join(outside.dir, to.p)
                    : path.basename(l);
            make(l, () => symlinkSync(target, at(l)));
          }
          const before = snapshot(outside.dir);
          const host = await fx.host({
            env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine },
          });
          const tally = new Tally();
          // The racer swaps `a` (made above, unless a link replaced it) with a link to outside.
          const swapper = await startSwapper(fx.root, outside.dir, "a");
          try {
            for (const o of ops) {
              // What needs a read first (edit, delete, move) gets one: the call then reaches its operation.
              if ("reads" in o) tally.add(await host.call("read_file", { path: o.reads, force: true }));
              tally.add(await host.call(o.tool, o.args));
            }
          } finally {
            await swapper.stop();
          }
          tally.assertNoMarker(outside.marker);
          assert.deepEqual(snapshot(outside.dir), before, `outside changed; calls:\n${tally.summary()}`);
          assert.deepEqual(tempFiles(fx.base), []);
        } finally {
          fx.cleanup();
        }
      },
    ),
    { numRuns: RUNS },
  );
});
