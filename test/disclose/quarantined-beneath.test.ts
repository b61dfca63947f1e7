// The known-values detector reads each quarantined file of the workspace (src/disclose/quarantined.ts)
// through the walk by descriptors, like every other read: a file there that is a hard link to a file
// outside is not read (its bytes are outside), and a `.env` inside is. The race (a folder swapped for
// a link between the scan and the read) goes the same way as every read through src/fs/beneath.ts,
// which test/fs/race.test.ts tries.
import assert from "node:assert/strict";
import { linkSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { quarantinedNeedles } from "../../src/disclose/quarantined.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-quarantined-");
after(() => fx.cleanup());

test("a quarantined name hard-linked to a file outside is not read for known values; one inside is", () => {
  const away = path.join(fx.base, "away");
  mkdirSync(away);
  writeFileSync(path.join(away, "outside.env"), "TOKEN=outside-value-0123456789abcdef\n");
  mkdirSync(path.join(fx.root, "app"));
  linkSync(path.join(away, "outside.env"), path.join(fx.root, "app/.env"));
  writeFileSync(path.join(fx.root, ".env"), "TOKEN=inside-value-0123456789abcdef\n");
  const texts = quarantinedNeedles(fx.root).map((n) => n.text);
  assert.ok(texts.includes("inside-value-0123456789abcdef"), JSON.stringify(texts));
  assert.ok(!texts.some((t) => t.includes("outside-value")), `read the outside file: ${JSON.stringify(texts)}`);
});

test("a quarantined file below a folder whose name is not UTF-8 is read for known values too", () => {
  const fx = makeFixture("latch-quarantined-unnamed-"); // its own root: an answer is reused for 1 s
  after(() => fx.cleanup());
  const odd = Buffer.concat([Buffer.from(fx.root + "/"), Buffer.from([0xff])]);
  mkdirSync(odd);
  writeFileSync(Buffer.concat([odd, Buffer.from("/.env")]), "TOKEN=unnamed-value-0123456789abcdef\n");
  const texts = quarantinedNeedles(fx.root).map((n) => n.text);
  assert.ok(texts.includes("unnamed-value-0123456789abcdef"), JSON.stringify(texts));
});
