// host.prepare and host.call with the answer (issue 34): decide without running, show the exact diff,
// and take the person's answer later only for the bytes they saw. Each attack is tried on the real
// disk and the real policy log: a file changed after the preview, a replayed approval, a forged
// sha256, an approval carried to another session, a call whose own checks fail.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { expectOk, expectRefused } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";
import { loggedDecisions } from "../adapters/scene.js";

const fx = makeFixture("latch-prepare-");
after(() => fx.cleanup());
const read = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");

const decisions = loggedDecisions;

/** A host on the default envelope (reads run, edits ask), the file read in session s1, and an edit of it prepared. */
async function prepared(rel: string, content = "one\ntwo\n") {
  fx.write({ [rel]: content });
  const host = await fx.host({ envelope: "default" });
  expectOk(await host.call("read_file", { path: rel }, { session: "s1" }));
  const args = { path: rel, old_string: "two", new_string: "TWO" };
  const p = await host.prepare("edit_file", args, { session: "s1" });
  return { host, args, p };
}

describe("host.prepare", () => {
  test("a read is allowed, with nothing to approve; an unknown tool is denied with the reason", async () => {
    fx.write({ "r.txt": "x\n" });
    const host = await fx.host({ envelope: "default" });
    const p = await host.prepare("read_file", { path: "r.txt" });
    assert.equal(p.action, "allow");
    assert.equal(p.approval, undefined);
    const u = await host.prepare("no_such_tool", {});
    assert.equal(u.action, "deny");
    assert.match(u.reason, /EUNKNOWNTOOL/);
  });

  test("an edit that needs a person: the exact diff and the content's sha256, and nothing written or logged", async () => {
    const { host, p } = await prepared("a.txt");
    assert.equal(p.action, "approve");
    assert.ok(p.approval);
    assert.match(p.approval.diff!, /-two\n\+TWO/);
    assert.match(p.approval.sha256, /^[0-9a-f]{64}$/);
    assert.match(p.approval.contentSha256!["a.txt"]!, /^[0-9a-f]{64}$/);
    assert.equal(read("a.txt"), "one\ntwo\n");
    assert.equal(decisions(host, "edit_file").length, 0, "a preview decides nothing on the log");
  });

  test("approved: the edit lands byte-exact and the log says who approved which content", async () => {
    const { host, args, p } = await prepared("b.txt");
    const a = p.approval!;
    const r = await host.call("edit_file", args, {
      session: "s1",
      approval: { id: a.id, sha256: a.sha256, answer: "approve", by: "alice" },
    });
    expectOk(r);
    assert.equal(read("b.txt"), "one\nTWO\n");
    const [d] = decisions(host, "edit_file");
    assert.equal(d.final, "allow");
    assert.match(d.reason, /approved by alice \(once\); for the content b\.txt sha256:[0-9a-f]{64}/);
  });

  test("denied: refused with the person's reason, nothing written, the deny on the log", async () => {
    const { host, args, p } = await prepared("c.txt");
    const a = p.approval!;
    const r = expectRefused(
      await host.call("edit_file", args, {
        session: "s1",
        approval: { id: a.id, sha256: a.sha256, answer: "deny", reason: "not today" },
      }),
      "approval",
    );
    assert.match(r.reason, /needs a person's approval: .*not today/);
    assert.equal(read("c.txt"), "one\ntwo\n");
    const [d] = decisions(host, "edit_file");
    assert.equal(d.final, "deny");
    assert.match(d.reason, /not today/);
  });

  test("attack: the file changes after the preview, then the approval is used: refused, the new bytes kept", async () => {
    const { host, args, p } = await prepared("d.txt");
    fx.write({ "d.txt": "one\ntwo\nSNEAKED IN\n" });
    const a = p.approval!;
    const r = expectRefused(
      await host.call("edit_file", args, {
        session: "s1",
        approval: { id: a.id, sha256: a.sha256, answer: "approve" },
      }),
    );
    assert.match(r.reason, /bytes moved since the preview|changed since you read it/);
    assert.equal(read("d.txt"), "one\ntwo\nSNEAKED IN\n");
    assert.equal(decisions(host, "edit_file")[0].final, "deny");
  });

  test("attack: the file is re-read and changed, so read-before-write passes, yet the approved bytes moved: refused", async () => {
    const { host, args, p } = await prepared("e.txt");
    fx.write({ "e.txt": "zero\ntwo\n" });
    expectOk(await host.call("read_file", { path: "e.txt" }, { session: "s1" }));
    const a = p.approval!;
    const r = expectRefused(
      await host.call("edit_file", args, {
        session: "s1",
        approval: { id: a.id, sha256: a.sha256, answer: "approve" },
      }),
    );
    assert.match(r.reason, /bytes moved since the preview/);
    assert.equal(read("e.txt"), "zero\ntwo\n");
  });

  test("attack: a replayed approval, a forged sha256 and another session are refused", async () => {
    const { host, args, p } = await prepared("f.txt", "two\n");
    const a = p.approval!;
    const forged = await host.call("edit_file", args, {
      session: "s1",
      approval: { id: a.id, sha256: "0".repeat(64), answer: "approve" },
    });
    assert.match(expectRefused(forged).reason, /unknown, used already or not for this sha256/);
    assert.equal(read("f.txt"), "two\n");
    // The forged try used the id up: the real sha256 no longer opens it either.
    const late = await host.call("edit_file", args, {
      session: "s1",
      approval: { id: a.id, sha256: a.sha256, answer: "approve" },
    });
    assert.match(expectRefused(late).reason, /unknown, used already/);
    // Prepared in s1, carried to s2 (which read the file too): the request differs, so no.
    expectOk(await host.call("read_file", { path: "f.txt" }, { session: "s2" }));
    const again = (await host.prepare("edit_file", args, { session: "s1" })).approval!;
    const other = await host.call("edit_file", args, {
      session: "s2",
      approval: { id: again.id, sha256: again.sha256, answer: "approve" },
    });
    assert.match(expectRefused(other).reason, /bytes moved since the preview/);
    assert.equal(read("f.txt"), "two\n");
    // Used once, it lands; used twice, it is refused.
    const once = (await host.prepare("edit_file", args, { session: "s1" })).approval!;
    const given = { id: once.id, sha256: once.sha256, answer: "approve" as const };
    expectOk(await host.call("edit_file", args, { session: "s1", approval: given }));
    assert.equal(read("f.txt"), "TWO\n");
    const replay = await host.call("write_file", { path: "f.txt", content: "x" }, { session: "s1", approval: given });
    assert.equal(replay.status, "refused");
    assert.equal(read("f.txt"), "TWO\n");
  });

  test("a call that fails its own checks (not read first) is denied at prepare, with nothing to approve", async () => {
    fx.write({ "g.txt": "two\n" });
    const host = await fx.host({ envelope: "default" });
    const p = await host.prepare("edit_file", { path: "g.txt", old_string: "two", new_string: "2" }, { session: "s9" });
    assert.equal(p.action, "deny");
    assert.equal(p.approval, undefined);
    assert.match(p.reason, /fails its own checks, so nobody was asked: .*read/i);
  });
});

test("attack: a secret in a prepared call's reason is redacted, as a refusal's would be", async () => {
  const token = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const host = await fx.host({ envelope: "default" });
  // A path outside the workspace: the refusal's reason quotes it.
  const p = await host.prepare("read_file", { path: `../${token}.txt` }, { session: "s9" });
  assert.equal(p.action, "deny");
  assert.match(p.reason, /\[REDACTED:github-pat\]\.txt` resolves to/);
  assert.ok(!JSON.stringify(p).includes(token), JSON.stringify(p));
});
