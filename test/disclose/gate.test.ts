// Issue 29 through the host: the envelope's `[disclosure]` modes and per-tool overrides, the policy
// programs' disclose phase (the Devlish example: allowed to run `ls`, the answer withheld), a scanner
// that fails or runs out of time withholds (fails closed), the known forms, the fingerprint key, and
// `latch explain`'s disclosure rules. Secrets are made at run time (secrets.ts).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { parseEnvelopeDef, type EnvelopeDef } from "../../src/policy/envelope-parse.js";
import { disclose } from "../../src/host/disclose.js";
import { DisclosureScanner } from "../../src/disclose/scanner.js";
import { knownNeedles } from "../../src/disclose/known.js";
import { scanText } from "../../src/disclose/scan.js";
import { FORMAT_RULES } from "../../src/disclose/rules.js";
import { resolveEnvelope, allDefinitions } from "../../src/policy/envelope-parse.js";
import { makeFixture } from "../helpers/fixture.js";
import { writeProgram } from "../policy/programs-helper.js";
import * as gen from "./secrets.js";

const fx = makeFixture("latch-disclose-gate-");
after(() => fx.cleanup());

const pat = gen.githubPat();
const aws = gen.awsKey();
fx.write({ "a.txt": `token = ${pat}\nkey = ${aws}\n`, "plain.txt": "nothing to see\n" });

const withhold: EnvelopeDef = {
  extends: "auto_edit",
  disclosure: { secrets: "withhold", tools: { read_file_range: "report", "read_many*": "allow" } },
};

test("withhold: the call completed, its output is replaced by what was found", async () => {
  const h = await fx.host({ config: { toolsPolicies: {}, agents: {}, envelopes: { w: withhold } }, envelope: "w" });
  const r = await h.call("read_file", { path: "a.txt" });
  assert.equal(r.status, "ok");
  const shown = JSON.stringify(r);
  assert.ok(!shown.includes(pat) && !shown.includes(aws));
  assert.match(
    shown,
    /completed, output withheld \(2 findings: github-pat, aws-access-token; disclosure\.secrets = withhold\)/,
  );
  // a result with nothing in it passes as it is
  const plain = await h.call("read_file", { path: "plain.txt" });
  assert.deepEqual((plain as { disclosure?: unknown }).disclosure, undefined);
  assert.match(JSON.stringify(plain), /nothing to see/);
});

test("per-tool overrides: report shows the output and names the findings; allow lets it pass", async () => {
  const h = await fx.host({ config: { toolsPolicies: {}, agents: {}, envelopes: { w: withhold } }, envelope: "w" });
  const r = await h.call("read_file_range", { path: "a.txt", start_line: 1, end_line: 2 });
  assert.ok(JSON.stringify(r).includes(pat));
  assert.deepEqual((r as { disclosure?: unknown }).disclosure, {
    action: "report",
    findings: [
      { rule: "github-pat", count: 1 },
      { rule: "aws-access-token", count: 1 },
    ],
  });
  const m = await h.call("read_many_files", { paths: ["a.txt"] }, { session: "fresh" });
  assert.ok(JSON.stringify(m).includes(pat), JSON.stringify(m).slice(0, 300));
});

test("built-in envelopes redact; a bad mode is refused with the fix", async () => {
  for (const name of ["auto_edit", "read_only", "default"])
    assert.equal(resolveEnvelope(name, allDefinitions({})).disclosure.secrets, "redact");
  assert.throws(
    () => parseEnvelopeDef({ disclosure: { secrets: "hide" } }, ["envelopes", "x"]),
    /Expected `envelopes\.x\.disclosure\.secrets` to be one of allow, report, redact, withhold, got `hide`/,
  );
});

test("a program in the disclose phase withholds a result it allowed to run (the Devlish example)", async () => {
  const seenFile = path.join(fx.base, "disclose-input.json");
  const prog = writeProgram(
    fx.base,
    "ack",
    `if (input.phase === "disclose") {
       require("fs").writeFileSync(${JSON.stringify(seenFile)}, raw);
       process.stdout.write(JSON.stringify({ decision: "withhold", reason: "acknowledged: ls ran" }));
     } else process.stdout.write(JSON.stringify({ decision: "allow", reason: "ls is fine", disclose: true }));`,
  );
  const h = await fx.host({ policyPrograms: [prog], envelope: "auto_edit" });
  const r = await h.call("list_dir", { path: "." });
  assert.equal(r.status, "ok");
  assert.match(JSON.stringify(r), /completed, output withheld \(policy program ack: acknowledged: ls ran\)/);
  assert.doesNotMatch(JSON.stringify(r), /plain\.txt/);
  const input = JSON.parse(readFileSync(seenFile, "utf8")) as Record<string, unknown>;
  assert.equal(input.phase, "disclose");
  assert.equal(input.tool, "list_dir");
  assert.match(String(input.sha256), /^[0-9a-f]{64}$/);
  assert.ok(Number(input.bytes) > 0);
  assert.equal(input.result, undefined, "no raw result without evidence");
  // the policy log says who withheld it
  const log = readFileSync(h.policyLog, "utf8");
  assert.match(log, /"disclosure":\{"action":"withhold","findings":\[\],"fingerprints":\{\},"origin":"program:/);
  // a program that crashes in the disclose phase withholds too
  const crash = writeProgram(
    fx.base,
    "crash",
    `if (input.phase === "disclose") process.exit(3);
     process.stdout.write(JSON.stringify({ decision: "allow", reason: "ok", disclose: true }));`,
  );
  const h2 = await fx.host({ policyPrograms: [crash], envelope: "auto_edit" });
  assert.match(
    JSON.stringify(await h2.call("list_dir", { path: "." })),
    /output withheld \(policy program crash exited with status 3/,
  );
});

test("a scan that fails or runs past its deadline withholds the result (fails closed)", async () => {
  const scanner = new DisclosureScanner([], randomBytes(32), 1);
  const big = `${"ghp_".repeat(2_000_000)}`;
  const envelope = resolveEnvelope("auto_edit", allDefinitions({}));
  const { shown, record } = await disclose(
    { scanner, envelope, tool: "read_file", session: "s" },
    { status: "ok", result: { content: big } },
  );
  scanner.close();
  assert.equal(record?.action, "withhold");
  assert.match(
    JSON.stringify(shown),
    /output withheld \(the disclosure scan did not finish within 0\.001 s; latch withholds/,
  );
  assert.ok(!JSON.stringify(shown).includes("ghp_ghp_"));
});

test("a workspace whose quarantined files could not be listed withholds the result (fails closed)", async () => {
  // The values to screen for come from a walk of the workspace (disclose/quarantined.ts); when that walk
  // fails the host passes why (review g42: it threw, and the whole call rejected with the walk's error).
  const scanner = new DisclosureScanner([], randomBytes(32), 5_000);
  const envelope = resolveEnvelope("auto_edit", allDefinitions({}));
  const why = "latch could not list the workspace's quarantined files (EMFILE: too many open files)";
  try {
    const { shown, record } = await disclose(
      { scanner, envelope, tool: "local_shell", session: "s", unlisted: why },
      { status: "ok", result: { stdout: "maybe a secret" } },
    );
    assert.equal(record?.action, "withhold");
    assert.equal(record?.origin, "scanner");
    assert.ok(!JSON.stringify(shown).includes("maybe a secret"));
    assert.match(
      JSON.stringify(shown),
      /output withheld \(latch could not list the workspace's quarantined files \(EMFILE/,
    );
  } finally {
    scanner.close();
  }
});

test("known values are found exactly and as base64 at any alignment, URL-encoded and hex", async () => {
  const value = gen.plainSecret();
  const needles = knownNeedles({ MY_API_KEY: value, HOME: "/home/someone", SHORT_TOKEN: "abc" });
  assert.ok(
    needles.every((n) => n.rule.startsWith("known-secret:MY_API_KEY")),
    "HOME and a short value are not secrets",
  );
  const d = { needles, rules: FORMAT_RULES };
  for (const prefix of ["", "u", "us", "use"]) {
    const blob = Buffer.from(`${prefix}${value}:rest`).toString("base64");
    const f = await scanText(`Authorization: Basic ${blob}`, d);
    assert.equal(f[0]?.rule, "known-secret:MY_API_KEY:base64", `base64 after ${prefix.length} bytes`);
  }
  assert.equal((await scanText(`q=${encodeURIComponent(value)}`, d))[0]?.rule, "known-secret:MY_API_KEY:url");
  assert.equal(
    (await scanText(Buffer.from(value).toString("hex").toUpperCase(), d))[0]?.rule,
    "known-secret:MY_API_KEY:hex",
  );
});

test("every format rule finds its token, and none fires on its keyword alone", async () => {
  const cases: [string, string][] = [
    ["aws-access-token", gen.awsKey()],
    ["github-pat", gen.githubPat()],
    ["gitlab-pat", gen.gitlabPat()],
    ["npm-access-token", gen.npmToken()],
    ["slack-token", gen.slackToken()],
    ["anthropic-api-key", gen.anthropicKey()],
    ["openai-api-key", gen.openaiKey()],
    ["jwt", gen.jwt()],
    ["private-key", gen.privateKey()],
  ];
  for (const [rule, token] of cases) {
    const f = await scanText(`x = "${token}";`);
    assert.deepEqual(f, [{ rule, start: 5, end: 5 + token.length }], rule);
  }
  const pw = gen.randomFrom("abcdefghijklmnop0123456789", 16);
  assert.deepEqual(
    (await scanText(`DATABASE_URL=postgres://app:${pw}@db.internal:5432/app`)).map((f) => f.rule),
    ["connection-string-password"],
  );
  assert.deepEqual(
    await scanText("postgres://user:password@localhost/db; ghp_ AKIA -----BEGIN RSA PRIVATE KEY-----"),
    [],
  );
});

test("the fingerprint key is 0600 in the state dir; latch explain shows the disclosure rules", async () => {
  const h = await fx.host({ env: { PATH: process.env.PATH ?? "", DEPLOY_TOKEN: gen.plainSecret() } });
  assert.equal(statSync(path.join(fx.state, "disclosure.key")).mode & 0o777, 0o600);
  const ex = await h.explain("read_file", { path: "a.txt" });
  assert.equal(ex.disclosure?.mode, "redact");
  assert.deepEqual(ex.disclosure?.knownSecrets, ["DEPLOY_TOKEN"]);
  assert.ok(ex.disclosure?.rules.includes("github-pat"));
});
