// runsLaterGlob: the files other programs run later (fs/protected.ts), which a write must not reach
// unasked. Its one-regex pre-check must never let a path through that one of the globs matches.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RUNS_LATER, runsLaterGlob } from "../../src/fs/protected.js";
import { envelopeGlob } from "../../src/fs/glob.js";

/** The answer of the globs alone, without the pre-check. */
const byGlobs = (abs: string) => RUNS_LATER.map((p) => `**/${p}/**`).find((g) => envelopeGlob(g)(abs));

test("a hook, a task file or an rc file at any depth is found, and its near names are not", () => {
  const found: [string, string][] = [
    ["/w/a/b/.git/hooks/pre-commit", "**/.git/hooks/**"],
    ["/w/.git/hooks", "**/.git/hooks/**"],
    ["/w/sub/.vscode/tasks.json", "**/.vscode/**"],
    ["/w/.bashrc", "**/.bashrc/**"],
    ["/w/pkg/.mcp.json", "**/.mcp.json/**"],
  ];
  for (const [abs, glob] of found) assert.equal(runsLaterGlob(abs), glob, abs);
  for (const near of ["/w/x.bashrc", "/w/.bashrcx", "/w/.git/hooksx", "/w/a.vscode/x", "/w/src/app.ts"])
    assert.equal(runsLaterGlob(near), undefined, near);
});

test("the pre-check agrees with the globs on every path of up to three segments drawn from their names", () => {
  const segs = [
    ...RUNS_LATER,
    ...RUNS_LATER.map((s) => s.toUpperCase()),
    ...RUNS_LATER.map((s) => `${s}x`),
    ...RUNS_LATER.map((s) => `a${s}`),
    ...["a", "b.txt", ".git", "hooks", "HOOKS", ".", "..", "", "x/y"],
  ];
  let matched = 0;
  for (const a of segs)
    for (const b of segs)
      for (const c of ["", "f.txt", ".git/hooks"]) {
        const abs = ["/w", a, b, c].filter((s, i) => i === 0 || s !== "").join("/");
        const want = byGlobs(abs);
        if (want !== undefined) matched++;
        assert.equal(runsLaterGlob(abs), want, abs);
      }
  assert.ok(matched > 1000, `the paths drawn include many that match (${matched})`);
});
