// The scanner remembers short strings that scanned clean (src/disclose/scanner.ts, CLEAN_MAX), so a
// call's reason, paths and field names are not scanned again call after call. The attack on such a
// memory: get a string remembered as clean, then make it a secret (a value in a quarantined file, a
// known value), and read it again. It must be redacted the second time.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, test } from "node:test";
import { DisclosureScanner } from "../../src/disclose/scanner.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-disclose-clean-");
after(() => fx.cleanup());

test("a string remembered as clean is found once it becomes a known value (setExtra)", async () => {
  const value = `plain-${randomBytes(12).toString("hex")}`;
  const scanner = new DisclosureScanner([], randomBytes(32));
  const first = await scanner.scan({ note: value });
  assert.deepEqual(first.findings, []);
  // the same string again: answered from memory, still clean
  assert.deepEqual((await scanner.scan({ note: value })).findings, []);
  scanner.setExtra([{ rule: "quarantined:.env", text: value }]);
  const again = await scanner.scan({ note: value });
  assert.deepEqual(
    again.findings.map((f) => [f.rule, f.count]),
    [["quarantined:.env", 1]],
  );
  assert.deepEqual(again.redacted, { note: "[REDACTED:quarantined:.env]" });
  scanner.close();
});

test("read a file, then put its line in a quarantined .env: the next read through the host redacts it", async () => {
  const value = `db-pass-${randomBytes(10).toString("hex")}`;
  fx.write({ "notes.txt": `${value}\n` });
  const h = await fx.host();
  try {
    const r1 = await h.call("read_file", { path: "notes.txt" });
    assert.equal(r1.status, "ok");
    assert.ok(JSON.stringify(r1).includes(value), "nothing marks it a secret yet");
    writeFileSync(path.join(fx.root, ".env"), `DB_PASSWORD=${value}\n`);
    // The quarantined files' values are walked for at most once a second (REUSE_MS in
    // src/disclose/quarantined.ts): wait past it, then read the same bytes again.
    await sleep(1100);
    const r2 = await h.call("read_file", { path: "notes.txt", force: true });
    assert.equal(r2.status, "ok");
    assert.ok(!JSON.stringify(r2).includes(value), `the remembered clean string came back: ${JSON.stringify(r2)}`);
    assert.match(JSON.stringify(r2), /\[REDACTED:quarantined:\.env\]/);
  } finally {
    h.close();
  }
  // and the policy log never held it
  const logs = path.join(fx.state, "logs");
  const { readdirSync } = await import("node:fs");
  for (const f of readdirSync(logs)) assert.ok(!readFileSync(path.join(logs, f), "utf8").includes(value));
});
