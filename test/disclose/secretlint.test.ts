// The maintained rule set (secretlint's recommended preset, src/disclose/secretlint.ts): formats only
// it knows are found, far into a long string (the keyword windows never lose one), a comment asking
// secretlint to look away is ignored, and every rule of the pinned preset has a trigger.
import assert from "node:assert/strict";
import { test } from "node:test";
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import { scanText } from "../../src/disclose/scan.js";
import { TRIGGER_TABLE, scanMaintained } from "../../src/disclose/secretlint.js";
import * as gen from "./secrets.js";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
// Built from random bytes at test time, never committed whole (repository scanners stay quiet).
const only: [string, () => string][] = [
  ["aws-secret-access-key", () => `aws_secret_access_key = "${gen.randomFrom(ALNUM, 40)}"`],
  ["sendgrid-api-key", () => "SG" + "." + gen.randomFrom(ALNUM, 22) + "." + gen.randomFrom(ALNUM, 43)],
  ["shopify-token", () => "shp" + "at_" + gen.randomFrom("abcdef0123456789", 32)],
  ["linear-api-key", () => "lin" + "_api_" + gen.randomFrom(ALNUM, 40)],
  ["npmrc-auth-token", () => `//registry.npmjs.org/:_auth` + `Token=${gen.randomFrom(ALNUM, 36)}`],
  ["connection-string-password", () => `mongodb://svc:${gen.randomFrom(ALNUM, 20)}@mongo.corp.net/app`],
];

test("formats only the maintained set knows are found, named, and redacted whole", async () => {
  for (const [rule, make] of only) {
    const secret = make();
    const found = await scanText(`before\n${secret}\nafter`);
    assert.equal(found.length, 1, `${rule}: ${JSON.stringify(found)}`);
    assert.equal(found[0].rule, rule);
    // The range covers the secret's random part to its last character.
    const text = `before\n${secret}\nafter`;
    const random = secret.match(/[A-Za-z0-9]{18,}/g)!.pop()!;
    const at = text.indexOf(random);
    assert.ok(found[0].start <= at && found[0].end >= at + random.length, `${rule}: the whole token is covered`);
  }
  // A basic-auth URL: latch's table names it too (connection-string-password); the preset alone:
  const url = `https://deploy:${gen.randomFrom(ALNUM, 18)}@build.corp.net`;
  assert.deepEqual(
    (await scanMaintained(`curl ${url}/x`)).map((f) => f.rule),
    ["basic-auth-url"],
  );
});

test("attack: the preset's npmrc range stops 11 characters short; the redaction still covers the token's tail", async () => {
  const token = gen.randomFrom(ALNUM, 36);
  const text = `//registry.npmjs.org/:_auth` + `Token=${token}\n`;
  const found = await scanMaintained(text);
  assert.equal(found.length, 1);
  assert.ok(found[0].end >= text.indexOf(token) + token.length, JSON.stringify(found));
});

test("a secret 200 KB into a string of source lines is found: the keyword windows reach it", async () => {
  const filler = Array.from({ length: 4000 }, (_, i) => `const v${i} = "https://example.org/x/${i}"; // account`).join(
    "\n",
  );
  for (const [rule, make] of only) {
    const secret = make();
    const text = `${filler}\n  ${secret}  \n${filler}`;
    const found = (await scanMaintained(text)).filter((f) => f.rule === rule);
    assert.equal(found.length, 1, rule);
    assert.ok(text.slice(found[0].start, found[0].end).length > 10, rule);
  }
});

test("attack: a secretlint-disable comment in the output does not hide a secret", async () => {
  const secret = only[1][1]();
  const text = `// secretlint-disable\n${secret}\n// secretlint-enable\n/* secretlint-disable-next-line */\n${secret}`;
  const found = await scanText(text);
  assert.equal(found.filter((f) => f.rule === "sendgrid-api-key").length, 2);
});

test("both tables find a GitHub token: one range, under latch's own name", async () => {
  const token = gen.githubPat();
  assert.deepEqual(await scanText(`x = "${token}";`), [{ rule: "github-pat", start: 5, end: 5 + token.length }]);
});

test("every rule of the pinned preset has a trigger, and no trigger names a rule the preset lacks", () => {
  const ids = presetRules.map((r) => r.meta.id.replace("@secretlint/secretlint-rule-", "")).sort();
  // filter-comments is the one left out on purpose: it lets the scanned text switch rules off.
  const triggered = TRIGGER_TABLE.map((t) => t.rule).sort();
  assert.deepEqual(
    ids.filter((id) => id !== "filter-comments"),
    triggered,
  );
});
