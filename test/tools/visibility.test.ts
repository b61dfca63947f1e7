// The attack of issue 13: a walk over the root must not hand over what the policy closes. Every
// walking tool, with both grep engines, over a tree holding credentials (the quarantine), files an
// envelope's always_deny and deny_paths close, and a denied substring: none of them is named, none of
// their bytes comes back, none of them is even read (their access times stay put), and each result
// says how many entries it left out.
import { STEADY_MARGIN_MS } from "../../src/browse/confirm.js";
import assert from "node:assert/strict";
import { statSync, utimesSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallResult } from "../../src/host/types.js";
import { parseEnvelopeDef } from "../../src/policy/envelope-parse.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";
import { lockedHost } from "./browse-fixture.js";

/** Files the walks must neither name nor read, with a marker in their content. */
const HIDDEN: Record<string, string> = {
  ".env": "TOKEN=leak-env needle\n",
  "app/.env.production": "TOKEN=leak-env-prod needle\n",
  ".ssh/id_rsa": "-----BEGIN leak-ssh needle\n",
  "certs/server.pem": "leak-pem needle\n",
  "app/.aws/credentials": "leak-aws needle\n",
  "private/notes.ts": "export const needle = 'leak-always-deny';\nconsole.log(needle);\n",
  "vault/plan.ts": "export const needle = 'leak-deny-paths';\nconsole.log(needle);\n",
  "app/secretstuff.ts": "export const needle = 'leak-substring';\nconsole.log(needle);\n",
  ".env.local": "TOKEN=leak-gitignored needle\n",
};
/** What the walks show: ordinary files, and `.env.example`, which the quarantine leaves open. */
const SHOWN: Record<string, string> = {
  ".gitignore": "*.local\n",
  ".env.example": "TOKEN=placeholder needle\n",
  "src/ok.ts": "export const needle = 'fine';\nconsole.log(needle);\n",
  "app/main.ts": "export const needle = 'fine too';\nconsole.log(needle);\n",
};
// Left out, each once: .env, .env.local, .ssh/ (a folder counts once), certs/server.pem, private/,
// vault/ (its folder matches vault/**), app/.env.production, app/.aws/, app/secretstuff.ts.
const HIDDEN_COUNT = 9;
const LEAKS = /leak-|id_rsa|server\.pem|credentials|\.aws|\.ssh|private\/|vault\/|secretstuff|\.env(?!\.example)/;

const ENGINES = ["rg", "js"] as const;

function ok(r: CallResult): Record<string, any> {
  assert.equal(r.status, "ok", JSON.stringify(r));
  return (r as { result: Record<string, any> }).result;
}

describe("one visibility rule under every walk", () => {
  let fx: Fixture;
  const OLD = new Date("2001-01-01T00:00:00Z");
  const host = (engine: string) => lockedHost(fx, engine);
  /** Access times in the past, before the modification times: any read moves them (relatime). */
  const age = () => {
    for (const rel of [...Object.keys(HIDDEN), ...Object.keys(SHOWN)])
      utimesSync(path.join(fx.root, rel), OLD, new Date("2002-01-01T00:00:00Z"));
  };
  const unread = (what: string) => {
    for (const rel of Object.keys(HIDDEN))
      assert.equal(statSync(path.join(fx.root, rel)).atimeMs, OLD.getTime(), `${what} read ${rel}`);
  };
  before(async () => {
    fx = makeFixture();
    fx.write({ ...HIDDEN, ...SHOWN });
    // grep's rg answer stands only for a tree unchanged since 2 s before rg started (steady-tree.ts):
    // what rg reads, and leaves unread, is the point here.
    await new Promise((r) => setTimeout(r, STEADY_MARGIN_MS + 200));
  });
  after(() => fx.cleanup());

  for (const engine of ENGINES) {
    test(`${engine}: grep {pattern: ".", regex: true} over the root prints no .env, .ssh/id_rsa, *.pem or envelope-closed line, and reads none of them`, async () => {
      const h = await host(engine);
      age();
      const r = await h.call("grep", { pattern: ".", regex: true });
      const out = ok(r);
      assert.equal((r as { display?: { engine: string } }).display?.engine, engine);
      assert.doesNotMatch(JSON.stringify(out), LEAKS);
      assert.match(out.results, /src\/ok\.ts:1:/);
      assert.match(out.results, /\.env\.example:1: TOKEN=placeholder/, ".env.example stays open");
      assert.equal(out.hidden, HIDDEN_COUNT);
      unread(`grep (${engine})`);
      // The probe works: a shown file's access time did move.
      assert.notEqual(statSync(path.join(fx.root, "src/ok.ts")).atimeMs, OLD.getTime(), "atime probe");
    });

    test(`${engine}: grep for a secret's own text finds nothing, and an include glob aimed at it neither`, async () => {
      const h = await host(engine);
      for (const args of [
        { pattern: "leak-" },
        { pattern: "BEGIN", include: "id_rsa" },
        { pattern: "leak", include: "*.pem" },
        { pattern: "leak", path: "app" },
      ]) {
        const out = ok(await h.call("grep", args));
        assert.equal(out.total_matches, 0, JSON.stringify(args));
        assert.doesNotMatch(JSON.stringify(out), LEAKS);
      }
    });

    test(`${engine}: find_files (its walk, whatever LATCH_GREP_ENGINE says) lists no hidden file, whatever the glob`, async () => {
      const h = await host(engine);
      age();
      for (const pattern of ["*", "**/*", "*.pem", "id_rsa", ".env*", "*.ts", "**/credentials"]) {
        const out = ok(await h.call("find_files", { pattern }));
        assert.doesNotMatch(JSON.stringify(out.matches), LEAKS, pattern);
        assert.equal(out.hidden, HIDDEN_COUNT, pattern);
      }
      assert.deepEqual(ok(await h.call("find_files", { pattern: ".env*" })).matches, [".env.example"]);
      unread(`find_files (${engine})`);
    });
  }

  test("list_dir (recursive), count_stats, ast_search and ast_rewrite_preview on the root: nothing hidden is named, counted or read", async () => {
    const h = await host("js");
    age();
    const list = ok(await h.call("list_dir", { path: ".", recursive: true, max_depth: 5 }));
    assert.doesNotMatch(list.entries, LEAKS);
    assert.match(list.entries, /src\/ok\.ts/);
    assert.equal(list.hidden, HIDDEN_COUNT);

    const stats = ok(await h.call("count_stats", { path: "." }));
    assert.equal(stats.files, Object.keys(SHOWN).length);
    const shownBytes = Object.values(SHOWN).reduce((n, t) => n + Buffer.byteLength(t), 0);
    assert.equal(stats.bytes, shownBytes, "only the shown files' bytes are counted");
    assert.equal(stats.hidden, HIDDEN_COUNT);

    const ast = ok(await h.call("ast_search", { pattern: "console.log($A)", path: "." }));
    assert.deepEqual(
      ast.matches.map((m: { match: string }) => m.match),
      ["app/main.ts:2: console.log(needle)", "src/ok.ts:2: console.log(needle)"],
    );
    assert.equal(ast.hidden, HIDDEN_COUNT);

    const rw = ok(await h.call("ast_rewrite_preview", { pattern: "console.log($A)", rewrite: "log($A)", path: "." }));
    assert.doesNotMatch(rw.diff, LEAKS);
    assert.equal(rw.files_changed, 2);
    assert.equal(rw.hidden, HIDDEN_COUNT);
    unread("list_dir / count_stats / ast tools");
  });

  test("a hidden file named directly is still refused by the envelope (the rule hides; the envelope decides)", async () => {
    const h = await host("rg");
    for (const [tool, args] of [
      ["grep", { pattern: "x", path: ".env" }],
      ["outline", { path: "private/notes.ts" }],
      ["ast_search", { pattern: "$A", path: "vault" }],
      ["count_stats", { path: "certs/server.pem" }],
    ] as const) {
      const r = await h.call(tool, args);
      assert.equal(r.status, "refused", `${tool} ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
      assert.doesNotMatch(JSON.stringify(r), /leak-/);
    }
  });

  test("an envelope glob ripgrep cannot be told sends grep to the walk, which still hides it", async () => {
    const h = await fx.host({
      env: { PATH: process.env.PATH ?? "", HOME: fx.base },
      envelope: "odd",
      config: {
        toolsPolicies: {},
        agents: {},
        envelopes: {
          odd: parseEnvelopeDef({ extends: "auto_edit", files: { read: { deny_paths: ["+(src|vault)/**"] } } }, [
            "envelopes",
            "odd",
          ]),
        },
      },
    });
    const r = await h.call("grep", { pattern: "needle" });
    const out = ok(r);
    assert.equal((r as { display?: { engine: string } }).display?.engine, "js");
    assert.doesNotMatch(out.results, /src\/ok\.ts|vault/);
    assert.match(out.results, /app\/main\.ts/);
  });
});
