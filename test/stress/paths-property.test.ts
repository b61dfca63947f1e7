// Property: random paths over random symlink layouts never resolve outside the root, and the
// resolver's answer agrees with a reference computed by GNU `realpath -m` on the same path.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { Refusal, ToolError } from "../../src/errors.js";
import { isInside, resolvePath } from "../../src/fs/paths.js";

const NAMES = ["a", "b", "c", "d"];
type Entry = { kind: "dir" } | { kind: "file" } | { kind: "link"; target: string };

// A layout: entries at depth ≤ 2 inside the root and beside it ("out"), links to anywhere.
const targetArb = fc.oneof(
  fc.constantFrom(...NAMES).map((n) => n),
  fc.constantFrom(...NAMES).map((n) => `../${n}`),
  fc.constantFrom(...NAMES).map((n) => `../out/${n}`),
  fc.constantFrom(...NAMES).map((n) => `/ROOT/${n}`),
  fc.constantFrom(...NAMES).map((n) => `/OUT/${n}`),
  fc.constant("/ROOT"),
  fc.constant("/OUT"),
  fc.constant("../../.."),
  fc.constantFrom(...NAMES).map((n) => `${n}/${n}`),
);
const entryArb: fc.Arbitrary<Entry> = fc.oneof(
  fc.constant<Entry>({ kind: "dir" }),
  fc.constant<Entry>({ kind: "file" }),
  targetArb.map((target): Entry => ({ kind: "link", target })),
);
const layoutArb = fc.dictionary(
  fc
    .tuple(
      fc.constantFrom("ws", "out"),
      fc.constantFrom(...NAMES),
      fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
    )
    .map(([top, a, b]) => (b ? `${top}/${a}/${b}` : `${top}/${a}`)),
  entryArb,
  { maxKeys: 12 },
);
const inputArb = fc.oneof(
  fc
    .array(fc.constantFrom(...NAMES, "..", ".", "out", "ws"), { minLength: 1, maxLength: 5 })
    .map((segs) => segs.join("/")),
  fc
    .array(fc.constantFrom(...NAMES, "..", "out", "ws"), { minLength: 1, maxLength: 4 })
    .map((segs) => `/BASE/${segs.join("/")}`),
);

/** Makes the folders from `base` down to `dir`; false when one of them is a link or a file. */
function realFolders(base: string, dir: string): boolean {
  let d = base;
  for (const seg of path.relative(base, dir).split(path.sep).filter(Boolean)) {
    d = path.join(d, seg);
    try {
      if (!lstatSync(d).isDirectory()) return false;
    } catch {
      mkdirSync(d);
    }
  }
  return true;
}

function build(base: string, layout: Record<string, Entry>): void {
  const root = path.join(base, "ws");
  const out = path.join(base, "out");
  // Parents first, so "ws/a/b" can be made when "ws/a" is a folder.
  for (const [rel, e] of Object.entries(layout).sort(([x], [y]) => x.length - y.length)) {
    const abs = path.join(base, rel);
    // An entry under a link would be made wherever the link leads: under `../../..` that was the
    // machine's own root (this test once left /a, /b, /c and /d there). Such an entry is absent.
    if (!realFolders(base, path.dirname(abs))) continue;
    try {
      if (e.kind === "dir") mkdirSync(abs);
      else if (e.kind === "file") writeFileSync(abs, "x");
      else symlinkSync(e.target.replace("/ROOT", root).replace("/OUT", out), abs);
    } catch {
      // A clash in the random layout (the name is taken): that entry is simply absent.
    }
  }
}

/**
 * `realpath -m` of each path; undefined where it does not finish in 3 s. GNU realpath -m spins on a
 * link that expands into itself (`out/d -> d/d`): that was the stall this test once had in a full
 * run (the test waiting in execFileSync's epoll). The resolver refuses such paths (ELOOP).
 */
function reference(paths: string[]): (string | undefined)[] {
  const run = (args: string[]) =>
    execFileSync("realpath", ["-m", "--", ...args], { encoding: "utf8", timeout: 3000 }).trimEnd();
  const timedOut = (err: unknown) => (err as { code?: string }).code === "ETIMEDOUT";
  try {
    return run(paths).split("\n");
  } catch (err) {
    if (!timedOut(err)) throw err;
  }
  return paths.map((p) => {
    try {
      return run([p]);
    } catch (err) {
      if (timedOut(err)) return undefined;
      throw err;
    }
  });
}

// A hang must fail, not stall the suite: each run has a time limit (fast-check `timeout`), the whole
// property stops after 3 minutes, shrinking included, and counts that as a failure
// (`interruptAfterTimeLimit`), realpath(1) is killed after 3 s, and the test itself ends at 4 minutes.
test(
  "random paths over random symlink layouts: never outside, and equal to realpath -m",
  { timeout: 240_000 },
  async () => {
    let checked = 0;
    let refused = 0;
    let spinning = 0;
    await fc.assert(
      fc.asyncProperty(layoutArb, fc.array(inputArb, { minLength: 1, maxLength: 12 }), async (layout, inputs) => {
        const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-prop-")));
        try {
          mkdirSync(path.join(base, "ws"), { recursive: true });
          mkdirSync(path.join(base, "out"), { recursive: true });
          build(base, layout);
          const root = path.join(base, "ws");
          const policy = { root, controlPlane: [], deniedSubstrings: [] };
          const lexical = inputs.map((i) => path.resolve(root, i.replace("/BASE", base)));
          const ref = reference(lexical);
          for (let k = 0; k < inputs.length; k++) {
            const input = inputs[k].replace("/BASE", base);
            let got: string | undefined;
            try {
              got = (await resolvePath(policy, input)).abs;
            } catch (err) {
              if (!(err instanceof Refusal) && !(err instanceof ToolError)) throw err;
            }
            if (ref[k] === undefined) {
              spinning++;
              assert.equal(
                got,
                undefined,
                `${input}: realpath -m does not finish, yet the resolver answered ${got} (layout ${JSON.stringify(layout)})`,
              );
            }
            if (got === undefined) {
              refused++;
              continue;
            }
            checked++;
            assert.ok(isInside(root, got), `${input} resolved outside: ${got}`);
            // realpath -m gives up on a simple loop and answers lexically; ours refuses loops, so never reaches here.
            assert.equal(
              got,
              ref[k],
              `${input}: resolver ${got}, realpath -m ${ref[k]} (layout ${JSON.stringify(layout)})`,
            );
          }
        } finally {
          rmSync(base, { recursive: true, force: true });
        }
      }),
      // The layout that once stalled the suite runs first, every time.
      {
        examples: [[{ "out/d": { kind: "link", target: "d/d" } }, ["/BASE/out/d/a", "a"]]],
        numRuns: 150,
        timeout: 30_000,
        interruptAfterTimeLimit: 180_000,
        markInterruptAsFailure: true,
      },
    );
    console.log(
      `# ${checked} paths resolved inside and equal to realpath -m; ${refused} refused (${spinning} of them spin realpath -m)`,
    );
    assert.ok(checked > 100 && refused > 100, "the layouts exercised both outcomes");
    assert.ok(spinning >= 1, "the self-expanding link was met");
  },
);
