// The built-in envelopes never run privilege escalation or raw-disk tools, nor an `rm` of /, the home
// folder or the workspace itself (issue 14, "Conservative built-ins"): in every built-in envelope, with an
// approver that says yes to anything it is asked, each is denied before anything runs. The disk and the
// policy log are checked afterwards.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Approver } from "../../src/approval/approver.js";
import { BUILTIN_ENVELOPES } from "../../src/policy/builtin-envelopes.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-conservative-");
after(() => fx.cleanup());
before(() => fx.write({ "a.txt": "keep me\n", "disk.img": "not a disk\n" }));

let asked = 0;
const yes: Approver = {
  name: "yes",
  request: async () => {
    asked++;
    return { approved: true, by: "test" };
  },
};

const ATTACKS = [
  "sudo ls",
  "su -c ls",
  "doas ls",
  "pkexec ls",
  "dd if=/dev/zero of=disk.img bs=1 count=4",
  "mkfs.ext4 disk.img",
  "mkfs -t ext4 disk.img",
  "mke2fs disk.img",
  "fdisk disk.img",
  "parted disk.img mklabel gpt",
  "wipefs -a disk.img",
  "shred -u a.txt",
  "rm -rf /",
  `rm -rf ${os.homedir()}`,
  `rm -rf ${fx.root}`,
  "rm -rf .",
  "find / -delete",
];

for (const envelope of Object.keys(BUILTIN_ENVELOPES)) {
  test(`${envelope}: privilege escalation, raw-disk tools and rm of / or the workspace are denied, never asked`, async () => {
    const host = await fx.host({ envelope, approver: yes });
    asked = 0;
    for (const command of ATTACKS) {
      const out = (await host.call("local_shell", { command })) as { status: string; reason?: string };
      assert.equal(out.status, "refused", `${command}: ${JSON.stringify(out)}`);
      const records = readFileSync(host.policyLog, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l).record as Record<string, unknown>)
        .filter((r) => r.type === "effect_decision");
      assert.equal(records.at(-1)?.final, "deny", `${command}: ${JSON.stringify(records.at(-1))}`);
    }
    assert.equal(asked, 0, "no person was asked: these are denied, not questions");
    assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "keep me\n");
    assert.equal(readFileSync(path.join(fx.root, "disk.img"), "utf8"), "not a disk\n");
    assert.ok(existsSync(fx.root));
  });
}
