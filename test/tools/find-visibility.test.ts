// find_files over rg confirms each listed name through folders opened from their parents' descriptors
// and applies the visibility rule alone (the lookup's lstat is the link check): issue 32. It must hide
// exactly what the found-entry check hid: gitignored, quarantined, always_deny, deny_paths, denied
// substrings, the control plane, links, a pipe, at any depth; and a folder swapped for a link to
// outside after rg listed it shows no outside name, even when its parent's descriptor is held.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { BeneathLookup } from "../../src/browse/confirm.js";
import type { CallResult } from "../../src/host/types.js";
import { parseEnvelopeDef } from "../../src/policy/envelope-parse.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

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

describe("find_files over rg hides what the found-entry check hid", () => {
  let fx: Fixture;
  const host = (engine: string) =>
    fx.host({
      env: { PATH: process.env.PATH ?? "", HOME: fx.base, LATCH_GREP_ENGINE: engine },
      envelope: "locked",
      config: {
        toolsPolicies: { local_fs: { _denied_path_substrings: "secretstuff", _max_find_results: "1000" } },
        agents: {},
        envelopes: {
          locked: parseEnvelopeDef(
            {
              extends: "auto_edit",
              always_deny: [{ tool: "*", when_path: "**/private/**" }],
              files: { read: { deny_paths: ["vault/**"] } },
            },
            ["envelopes", "locked"],
          ),
        },
      },
    });
  before(() => {
    fx = makeFixture();
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
    SHOWN.push("a/b/c/d/e/f/server.pem.ts");
    SHOWN.sort((p, q) => (p < q ? -1 : 1));
    // Links (to a file and a folder, inside and out) and a pipe are no files to list.
    mkdirSync(path.join(fx.base, "outside", "deep"), { recursive: true });
    writeFileSync(path.join(fx.base, "outside", "deep", "stolen.ts"), "x\n");
    symlinkSync(path.join(fx.base, "outside", "deep"), path.join(fx.root, "a", "b", "c", "escape"));
    symlinkSync(path.join(fx.root, "keep.ts"), path.join(fx.root, "a", "b", "c", "d", "inner-link.ts"));
    execFileSync("mkfifo", [path.join(fx.root, "a", "b", "c", "d", "pipe.ts")]);
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
