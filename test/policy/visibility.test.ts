// The visibility rule's two forms must agree: `hides` (what the in-process walk applies) and the
// ripgrep exclusions (`rgExcludes`, what rg is told). Each case makes real files, lists them with the
// real rg under the exclusions, and compares with `hides` applied to every entry and its folders.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { rgPath } from "@vscode/ripgrep";
import { allDefinitions, parseEnvelopeDef, resolveEnvelope } from "../../src/policy/envelope-parse.js";
import { envelopeGlobForRg, substringGlob, visibilityRule, type Visibility } from "../../src/policy/visibility.js";
import { RG_WALK_FLAGS } from "../../src/browse/grep-rg.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

const NAMES = [
  ".env",
  ".env.",
  ".env.e",
  ".env.ex",
  ".env.exa",
  ".env.exampl",
  ".env.example",
  ".env.examplex",
  ".env.examples",
  ".env.ezample",
  ".env.local",
  ".envrc",
  "env",
  "a.pem",
  "a.pem.txt",
  "tls.key",
  "keys.txt",
  "id_rsa",
  "id_rsa.pub",
  "my_id_rsa",
  "id_ed25519_work",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".ssh/config",
  ".ssh/known_hosts",
  ".aws/credentials",
  ".gnupg/pubring.kbx",
  ".kube/config",
  ".kube/other",
  ".docker/config.json",
  ".docker/daemon.json",
  "plain.txt",
  "vault/plan.md",
  "vault-not/plan.md",
  "logs/a.log",
  "logs/keep.txt",
  "deep/x/build/out.js",
  "deep/x/building.txt",
  "src/gen/z.ts",
  "src/generated.ts",
  "state/latch.db",
];

function filesUnder(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) out.push(...filesUnder(path.join(dir, d.name), r));
    else out.push(r);
  }
  return out;
}

/** What the walk would show: files whose every folder and themselves the rule does not hide. */
function shownByRule(v: Visibility, all: string[], startRel: string): string[] {
  const prefix = startRel === "." ? "" : startRel + "/";
  return all
    .filter((f) => f.startsWith(prefix))
    .filter((f) => {
      const segs = f.split("/");
      for (let i = prefix ? prefix.split("/").length - 1 : 0; i < segs.length; i++) {
        if (v.hides(segs.slice(0, i + 1).join("/"), i < segs.length - 1) !== undefined) return false;
      }
      return true;
    })
    .map((f) => f.slice(prefix.length))
    .sort();
}

function shownByRg(root: string, excludes: string[], startRel: string): string[] {
  const cwd = path.join(root, startRel);
  let out: string;
  try {
    out = execFileSync(
      rgPath,
      ["--files", "--null", ...RG_WALK_FLAGS, ...excludes.flatMap((g) => ["-g", g]), "--", "./"],
      { cwd, encoding: "utf8" },
    );
  } catch (err) {
    out = (err as { stdout?: string }).stdout ?? ""; // exit 1: nothing listed
  }
  return out
    .split("\0")
    .filter((s) => s !== "")
    .map((s) => s.replace(/^\.\//, ""))
    .sort();
}

describe("the visibility rule and its ripgrep form agree on real files", () => {
  let fx: Fixture;
  before(() => {
    fx = makeFixture();
    for (const n of NAMES) {
      mkdirSync(path.dirname(path.join(fx.root, n)), { recursive: true });
      writeFileSync(path.join(fx.root, n), "x\n");
    }
  });
  after(() => fx.cleanup());

  const envelope = (read: Record<string, unknown>, always_deny: unknown[] = []) =>
    resolveEnvelope(
      "t",
      allDefinitions({
        t: parseEnvelopeDef({ extends: "auto_edit", files: { read }, always_deny }, ["envelopes", "t"]),
      }),
    );

  const cases: { name: string; denied?: string[]; read?: Record<string, unknown>; deny?: unknown[]; cp?: string }[] = [
    { name: "the credential quarantine alone (with its .env.example exception)" },
    { name: "denied substrings: a name part, a folder with a trailing slash", denied: ["vault", "build/"] },
    { name: "a denied substring across a slash, at the root", denied: ["x/build"] },
    {
      name: "deny_paths and approve_paths, relative and absolute",
      read: { deny_paths: ["logs/*.log", "**/gen/**"], approve_paths: ["ROOT/deep/**"] },
    },
    { name: "always_deny for every tool", deny: [{ tool: "*", when_path: "**/vault/**" }] },
    { name: "always_deny for another tool does not apply", deny: [{ tool: "read_file", when_path: "**/vault/**" }] },
    { name: "the control plane inside the root", cp: "state" },
  ];
  for (const c of cases) {
    for (const startRel of [".", "src", "deep/x"]) {
      test(`${c.name}, walking ${startRel}`, () => {
        const read = JSON.parse(JSON.stringify(c.read ?? {}).replaceAll("ROOT", fx.root));
        const v = visibilityRule({
          root: fx.root,
          controlPlane: c.cp ? [path.join(fx.root, c.cp)] : [],
          deniedSubstrings: c.denied ?? [],
          envelope: envelope(read, c.deny),
          tool: "grep",
        });
        const excludes = v.rgExcludes(startRel);
        if (excludes === undefined) {
          // Only a substring across a slash below the root may lack an rg form.
          assert.ok(c.denied?.some((d) => d.includes("/") && !d.endsWith("/")) && startRel !== ".", c.name);
          return;
        }
        const all = filesUnder(fx.root);
        assert.deepEqual(shownByRg(fx.root, excludes, startRel), shownByRule(v, all, startRel));
      });
    }
  }

  test("the rule hides what it must (spot checks of the walk's form)", () => {
    const v = visibilityRule({
      root: fx.root,
      controlPlane: [],
      deniedSubstrings: [],
      envelope: envelope({}),
      tool: "grep",
    });
    for (const hidden of [".env", ".env.local", ".ssh", "a.pem", "id_rsa.pub", ".kube/config"])
      assert.ok(v.hides(hidden, hidden === ".ssh") !== undefined, hidden);
    for (const shown of [".env.example", ".envrc", "plain.txt", ".kube/other", "keys.txt"])
      assert.equal(v.hides(shown, false), undefined, shown);
  });

  test("glob translation: what has no ripgrep form says so, what cannot match below the folder is dropped", () => {
    assert.equal(substringGlob("a/b", "src"), null);
    assert.equal(substringGlob("a*b", "."), null);
    assert.equal(substringGlob(".git/", "src"), "**/*.git/");
    assert.deepEqual(envelopeGlobForRg("+(a|b)/**", "/r", "."), null);
    assert.deepEqual(envelopeGlobForRg("/etc/**", "/r", "."), []);
    assert.deepEqual(envelopeGlobForRg("/*/r/x", "/r", "."), null);
    assert.deepEqual(envelopeGlobForRg("/r/src/x/**", "/r", "src"), ["/x/**", "/x"]);
    assert.deepEqual(envelopeGlobForRg("lib/**", "/r", "src"), []);
    assert.deepEqual(envelopeGlobForRg("src/**/x", "/r", "src/a"), ["**/x"]);
  });
});
