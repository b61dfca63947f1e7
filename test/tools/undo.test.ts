// undo through the host: each file tool's write undone to the exact bytes; an undo after another
// process changed the file refused with the diff (the disk untouched); under read_only refused by the
// policy; approvals show the undo's exact diff; the store deduplicates and evicts oldest first, and
// says so when an undo is no longer possible; the policy log names the call and its pre-images.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import type { Host } from "../../src/host/create-host.js";
import { PreImages } from "../../src/fs/preimages.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-undo-");
after(() => fx.cleanup());
const LOG = path.join(fx.base, "policy.jsonl");
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host({ policyLog: LOG }));
const call = async (tool: string, args: Record<string, unknown>, session = "s1"): Promise<any> =>
  (await host()).call(tool, args, { session });
const at = (rel: string) => path.join(fx.root, rel);
const disk = (rel: string) => (existsSync(at(rel)) ? readFileSync(at(rel)) : null);

async function ok(tool: string, args: Record<string, unknown>, session = "s1"): Promise<any> {
  const r = await call(tool, args, session);
  assert.equal(r.status, "ok", `${tool}: ${JSON.stringify(r)}`);
  return r;
}

describe("undo restores the exact bytes of every file tool's write", () => {
  test("edit_file and sed undone one by one, newest first, byte for byte; a second undo of one is refused", async () => {
    const first = Buffer.from("one\r\ntwo\r\n\u00fc\ttail"); // CRLF, non-ASCII, no final newline
    writeFileSync(at("e.txt"), first);
    await ok("read_file", { path: "e.txt" });
    const e = await ok("edit_file", { path: "e.txt", old_string: "two", new_string: "TWO" });
    const s = await ok("sed", { path: "e.txt", pattern: "one", replacement: "ONE" });
    const afterSed = disk("e.txt");
    await ok("undo", { call_id: s.result.call_id });
    assert.deepEqual(disk("e.txt"), Buffer.from("one\r\nTWO\r\n\u00fc\ttail"));
    await ok("undo", { call_id: e.result.call_id });
    assert.deepEqual(disk("e.txt"), first);
    // The sed's result is gone from the file: undoing it again is refused, not applied twice.
    const again = await call("undo", { call_id: s.result.call_id });
    assert.equal(again.status, "refused", JSON.stringify(again));
    assert.deepEqual(disk("e.txt"), first);
    assert.notDeepEqual(afterSed, first);
  });

  test("a created file is removed, a deleted one recreated, a move moved back (the overwritten file too)", async () => {
    const w = await ok("write_file", { path: "made/new.txt", content: "fresh\n" });
    await ok("undo", { call_id: w.result.call_id });
    assert.equal(disk("made/new.txt"), null);

    fx.write({ "d.txt": "doomed\n" });
    await ok("read_file", { path: "d.txt" });
    const d = await ok("delete_file", { path: "d.txt" });
    assert.equal(disk("d.txt"), null);
    await ok("undo", { call_id: d.result.call_id });
    assert.equal(disk("d.txt")?.toString(), "doomed\n");

    fx.write({ "mv/src.txt": "source\n", "mv/dst.txt": "victim\n" });
    await ok("read_file", { path: "mv/dst.txt" });
    const m = await ok("move_file", { from: "mv/src.txt", to: "mv/dst.txt", overwrite: true });
    assert.equal(disk("mv/dst.txt")?.toString(), "source\n");
    const u = await ok("undo", { call_id: m.result.call_id });
    assert.equal(disk("mv/src.txt")?.toString(), "source\n");
    assert.equal(disk("mv/dst.txt")?.toString(), "victim\n");
    assert.equal(u.result.changed, 2);
  });

  test("apply_patch over three files, and `since` undoing a session's writes in reverse order", async () => {
    fx.write({ "p/a.txt": "a1\n", "p/b.txt": "b1\n" });
    await ok("read_file", { path: "p/a.txt" });
    await ok("read_file", { path: "p/b.txt" });
    const patch = [
      "*** Begin Patch",
      "*** Update File: p/a.txt",
      "@@",
      "-a1",
      "+a2",
      "*** Delete File: p/b.txt",
      "*** Add File: p/c.txt",
      "+c2",
      "*** End Patch",
    ].join("\n");
    const p = await ok("apply_patch", { patch });
    await ok("edit_file", { path: "p/a.txt", old_string: "a2", new_string: "a3" });
    await ok("write_file", { path: "p/c.txt", content: "c3\n" }, "s1");
    // Another session's write in between is not part of s1's `since`.
    const other = await ok("write_file", { path: "p/other.txt", content: "o\n" }, "s2");
    const u = await ok("undo", { since: p.result.call_id });
    assert.deepEqual(
      u.result.undone.map((c: { tool: string }) => c.tool),
      ["write_file", "edit_file", "apply_patch"],
    );
    assert.equal(disk("p/a.txt")?.toString(), "a1\n");
    assert.equal(disk("p/b.txt")?.toString(), "b1\n");
    assert.equal(disk("p/c.txt"), null);
    assert.equal(disk("p/other.txt")?.toString(), "o\n");
    assert.ok(other.result.call_id);
  });
});

describe("undo refuses what it must not do", () => {
  test("an undo after another process changed the file is refused with the diff; the disk keeps that change", async () => {
    fx.write({ "c.txt": "base\n" });
    await ok("read_file", { path: "c.txt" });
    const e = await ok("edit_file", { path: "c.txt", old_string: "base", new_string: "agent" });
    // Another process (not latch) appends a line after the agent's write.
    const sh = spawnSync("sh", ["-c", 'printf "person\\n" >> "$1"', "sh", at("c.txt")]);
    assert.equal(sh.status, 0);
    const r = await call("undo", { call_id: e.result.call_id });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(r.reason, /changed since call/);
    assert.match(r.reason, /^-person$/m, "the diff shows the later change the undo would discard");
    assert.match(r.reason, /^\+base$/m, "and what the file held before the call");
    assert.equal(disk("c.txt")?.toString(), "agent\nperson\n");
  });

  test("an undo of a file whose folder is now a link elsewhere is refused, and writes neither file (g60)", async () => {
    // Review g60: the undo resolved `lk/x.txt` through the link to `lk-real/x.txt`, then looked the
    // call's files up by the name it stored: EINTERNAL (reading 'abs'). Written through the link, it
    // would put the call's bytes back in another file than the one the call wrote.
    fx.write({ "lk/x.txt": "old\n", "lk-real/x.txt": "other\n" });
    await ok("read_file", { path: "lk/x.txt" });
    const e = await ok("edit_file", { path: "lk/x.txt", old_string: "old", new_string: "new" });
    renameSync(at("lk"), at("lk-was"));
    symlinkSync("lk-real", at("lk"));
    const r = await call("undo", { call_id: e.result.call_id });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(r.reason, /`lk\/x\.txt` now leads to `lk-real\/x\.txt`/, r.reason);
    assert.equal(disk("lk-real/x.txt")?.toString(), "other\n");
    assert.equal(disk("lk-was/x.txt")?.toString(), "new\n");
  });

  test("an undo under the read_only envelope is refused by the policy; the file keeps the write", async () => {
    fx.write({ "ro.txt": "before\n" });
    await ok("read_file", { path: "ro.txt" });
    const e = await ok("edit_file", { path: "ro.txt", old_string: "before", new_string: "after" });
    const log = path.join(fx.base, "ro.jsonl");
    const ro = await fx.host({ envelope: "read_only", policyLog: log });
    const r: any = await ro.call("undo", { call_id: e.result.call_id }, { session: "s1" });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.equal(r.gate, "envelope");
    assert.equal(disk("ro.txt")?.toString(), "after\n");
    const decisions = readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).record)
      .filter((rec) => rec.type === "effect_decision" && rec.tool === "undo");
    assert.deepEqual(
      decisions.map((d) => d.final),
      ["deny"],
    );
  });

  test("an unknown call id is an error naming where ids come from; a read has none", async () => {
    const r = await call("undo", { call_id: "c-nope" });
    assert.equal(r.status, "error");
    assert.equal(r.code, "ENOENT");
    assert.match(r.message, /latch history/);
    const both = await call("undo", { call_id: "a", since: "b" });
    assert.equal(both.status, "error");
    assert.equal(both.code, "EINVAL");
  });

  test("the approval shows the undo's exact diff, and a yes binds the undo to those bytes", async () => {
    fx.write({ "ap.txt": "v1\n" });
    await ok("read_file", { path: "ap.txt" });
    const e = await ok("edit_file", { path: "ap.txt", old_string: "v1", new_string: "v2" });
    let seen: ApprovalRequest | undefined;
    const approver: Approver = {
      name: "recorder",
      async request(req) {
        seen = req;
        return { approved: true, by: "test" };
      },
    };
    const strict = await fx.host({ envelope: "strict", approver, policyLog: path.join(fx.base, "strict.jsonl") });
    const r: any = await strict.call("undo", { call_id: e.result.call_id }, { session: "s1" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(seen?.tool, "undo");
    assert.match(seen.diff!, /^-v2$/m);
    assert.match(seen.diff!, /^\+v1$/m);
    assert.equal(disk("ap.txt")?.toString(), "v1\n");
  });
});

describe("the store", () => {
  test("a content replaced twice is kept once (deduplicated by sha256), deflated", async () => {
    const big = (ch: string) => ch.repeat(20_000) + "\n";
    const h = await fx.host({
      policyLog: path.join(fx.base, "cap.jsonl"),
      config: { toolsPolicies: { local_fs: { _undo_max_bytes: "60000" } }, agents: {} },
    });
    const c = (tool: string, args: Record<string, unknown>) => h.call(tool, args, { session: "cap" }) as Promise<any>;
    const before = (() => {
      const store = new PreImages(h.state.db);
      try {
        return store.used(h.root);
      } finally {
        store.close();
      }
    })();
    writeFileSync(at("cap.txt"), big("a"));
    await c("read_file", { path: "cap.txt" });
    const w1 = await c("write_file", { path: "cap.txt", content: big("b") });
    const w2 = await c("write_file", { path: "cap.txt", content: big("a") });
    const w3 = await c("write_file", { path: "cap.txt", content: big("b") });
    for (const w of [w1, w2, w3]) assert.equal(w.status, "ok", JSON.stringify(w));
    const store = new PreImages(h.state.db);
    try {
      // big("a") replaced twice, big("b") once: two blobs, each deflated far below 40 kB.
      const used = store.used(h.root);
      assert.equal(used.blobs - before.blobs, 2);
      assert.ok(used.bytes - before.bytes < 1_000, `deflated: ${used.bytes - before.bytes} bytes`);
    } finally {
      store.close();
    }
  });

  test("pre-images of every size come back byte for byte, deflated with a window sized to them", async () => {
    // 65 bytes (the smallest deflated: a 512-byte window), the edit bench's 3.6 kB, one just past
    // a 32 kB window, and 300 kB: each edited, then undone.
    const text = (n: number) =>
      Array.from({ length: Math.ceil(n / 12) }, (_, i) => `line ${(i * 7919) % 1000}\n`)
        .join("")
        .slice(0, n);
    for (const size of [65, 3_610, 32_600, 300_000]) {
      const rel = `sized-${size}.txt`;
      const first = Buffer.from("head\n" + text(size - 5));
      writeFileSync(at(rel), first);
      await ok("read_file", { path: rel, force: true });
      const w = await ok("edit_file", { path: rel, old_string: "head\n", new_string: "HEAD\n" });
      await ok("undo", { call_id: w.result.call_id });
      assert.deepEqual(disk(rel), first, `${size} bytes`);
    }
  });

  test("evicted pre-images: the undo is refused, naming _undo_max_bytes; nothing changes", async () => {
    const h = await fx.host({
      policyLog: path.join(fx.base, "evict.jsonl"),
      config: { toolsPolicies: { local_fs: { _undo_max_bytes: "6000" } }, agents: {} },
    });
    const c = (tool: string, args: Record<string, unknown>) => h.call(tool, args, { session: "ev" }) as Promise<any>;
    // Text that does not compress well: every line different.
    const text = (seed: number) =>
      Array.from({ length: 600 }, (_, i) => ((i + 1) * 2654435761 * seed).toString(36)).join("\n") + "\n";
    writeFileSync(at("ev.txt"), text(1));
    await c("read_file", { path: "ev.txt" });
    const w1 = await c("write_file", { path: "ev.txt", content: text(2) });
    const w2 = await c("write_file", { path: "ev.txt", content: text(3) });
    const w3 = await c("write_file", { path: "ev.txt", content: text(4) });
    const w4 = await c("write_file", { path: "ev.txt", content: text(5) });
    for (const w of [w1, w2, w3, w4]) assert.equal(w.status, "ok", JSON.stringify(w));
    const store = new PreImages(h.state.db);
    try {
      // Each content deflates to about 3.5 kB: only the newest fits under 6000 bytes.
      assert.ok(store.used(h.root).bytes <= 6_000, "the cap holds");
      assert.equal(store.used(h.root).blobs, 1);
    } finally {
      store.close();
    }
    const r = await c("undo", { since: w1.result.call_id });
    assert.equal(r.status, "refused", JSON.stringify(r));
    assert.match(r.reason, /no longer possible/);
    assert.match(r.reason, /_undo_max_bytes/);
    assert.equal(readFileSync(at("ev.txt"), "utf8"), text(5));
    // The newest call's pre-image is still there: that undo works.
    const u = await c("undo", { call_id: w4.result.call_id });
    assert.equal(u.status, "ok", JSON.stringify(u));
    assert.equal(readFileSync(at("ev.txt"), "utf8"), text(4));
  });

  test("the policy log names the write's call id and each file's hashes before and after", async () => {
    fx.write({ "lg.txt": "log me\n" });
    await ok("read_file", { path: "lg.txt" });
    const e = await ok("edit_file", { path: "lg.txt", old_string: "log", new_string: "LOG" });
    const recs = readFileSync(LOG, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).record);
    const decision = recs.find((r) => r.type === "effect_decision" && r.call_id === e.result.call_id);
    assert.ok(decision, "the decision carries the call id");
    const outcome = recs.find((r) => r.type === "effect_outcome" && r.effect_id === decision.effect_id);
    assert.deepEqual(outcome.preimages, {
      call_id: e.result.call_id,
      files: [{ path: "lg.txt", before_sha256: e.result.old_sha256, after_sha256: e.result.new_sha256 }],
    });
  });
});
