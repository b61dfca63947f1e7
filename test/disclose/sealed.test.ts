// Sealed raw evidence (issue 29, point 4): with --policy-evidence-seal the log keeps what the gate
// redacted, encrypted to the operator's X25519 public key. The log holds no byte of the secret, still
// verifies, and `latch log unseal` with the private key gives the result back whole; another key, a
// changed record, or a private key handed to latch at start are refused with the fix.
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { runCli } from "../helpers/cli.js";
import { githubPat } from "./secrets.js";

const fx = makeFixture("latch-sealed-");
after(() => fx.cleanup());
const token = githubPat();
// Each test reads its own file: a second read of one is answered "unchanged", with nothing to seal.
fx.write({ "conf.txt": `token = ${token}\n`, "conf2.txt": `token = ${token}\n`, "plain.txt": "nothing to see\n" });

function keyPair(name: string): { pub: string; priv: string } {
  const { publicKey, privateKey } = generateKeyPairSync("x25519");
  const pub = path.join(fx.base, `${name}.pub`);
  const priv = path.join(fx.base, `${name}.key`);
  writeFileSync(pub, publicKey.export({ type: "spki", format: "pem" }));
  writeFileSync(priv, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return { pub, priv };
}
const operator = keyPair("operator");
const other = keyPair("other");

async function call(file: string, log: string, seal: string) {
  const args = ["call", "read_file", JSON.stringify({ path: file }), "--root", fx.root, "--state-dir", fx.state];
  return runCli([...args, "--policy-log", log, "--policy-evidence-seal", seal]);
}

test("a redacted result is kept sealed: no byte of the secret in the log, verify passes, unseal gives it back", async () => {
  const log = path.join(fx.base, "run-1.jsonl");
  const r = await call("conf.txt", log, operator.pub);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes(token), "the client sees the redaction");
  assert.match(r.stdout, /REDACTED:github-pat/);
  const text = readFileSync(log, "utf8");
  assert.ok(!text.includes(token), "the log holds no byte of the secret");
  assert.ok(!text.includes(Buffer.from(token).toString("base64")), "nor its base64");
  const sealed = text.split("\n").filter((l) => l.includes('"sealed_raw"'));
  assert.equal(sealed.length, 1, "one sealed result");

  const verify = await runCli(["log", "verify", log, "--state-dir", fx.state]);
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);

  const open = await runCli(["log", "unseal", log, "--key", operator.priv]);
  assert.equal(open.code, 0, open.stderr);
  const line = JSON.parse(open.stdout.trim()) as { effect_id: number; result: { content: string } };
  assert.ok(line.result.content.includes(`token = ${token}`), "the raw result, whole");

  const wrong = await runCli(["log", "unseal", log, "--key", other.priv]);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /does not open with this key/);
  assert.ok(!wrong.stdout.includes(token) && !wrong.stderr.includes(token));
});

test("attack: a sealed record changed in the log no longer opens, and verify names it", async () => {
  const log = path.join(fx.base, "run-2.jsonl");
  assert.equal((await call("conf2.txt", log, operator.pub)).code, 0);
  const lines = readFileSync(log, "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes('"sealed_raw"'));
  const rec = JSON.parse(lines[i]) as { record: { sealed_raw: { ct: string } } };
  const ct = Buffer.from(rec.record.sealed_raw.ct, "base64");
  ct[0] ^= 1;
  rec.record.sealed_raw.ct = ct.toString("base64");
  lines[i] = JSON.stringify(rec);
  writeFileSync(log, lines.join("\n"));
  const open = await runCli(["log", "unseal", log, "--key", operator.priv]);
  assert.notEqual(open.code, 0);
  assert.match(open.stderr, /does not open with this key \(another key sealed it, or the record was changed\)/);
  const verify = await runCli(["log", "verify", log, "--state-dir", fx.state]);
  assert.notEqual(verify.code, 0, "the chain catches the change too");
});

test("a result with nothing to redact keeps no sealed copy", async () => {
  const log = path.join(fx.base, "run-3.jsonl");
  assert.equal((await call("plain.txt", log, operator.pub)).code, 0);
  assert.ok(!readFileSync(log, "utf8").includes('"sealed_raw"'));
});

test("a private key given to --policy-evidence-seal stops start-up, naming the fix", async () => {
  const r = await call("plain.txt", path.join(fx.base, "run-4.jsonl"), operator.priv);
  assert.notEqual(r.code, 0);
  assert.match(r.stdout + r.stderr, /is a private key: give latch the public one \(openssl pkey -in .* -pubout/);
  const notAKey = path.join(fx.base, "not-a-key.pem");
  writeFileSync(notAKey, "hello\n");
  const r2 = await call("plain.txt", path.join(fx.base, "run-5.jsonl"), notAKey);
  assert.notEqual(r2.code, 0);
  assert.match(r2.stdout + r2.stderr, /is not a PEM public key .*openssl genpkey -algorithm X25519/);
});
