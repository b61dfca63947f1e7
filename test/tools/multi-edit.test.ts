// edit_file's `edits` (in order, all or none) with a fast-check diff replay, and `dry_run` on every
// write tool: the exact diff, nothing written, no read recorded (the real call still works after it).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { applyPatch } from "diff";
import fc from "fast-check";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import { hasHidden, readDiff } from "../../src/approval/visible.js";
import type { Host } from "../../src/host/create-host.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host());
const call = async (tool: string, args: Record<string, unknown>): Promise<any> => (await host()).call(tool, args);
const read = (rel: string) => readFileSync(path.join(fx.root, rel), "utf8");

describe("edit_file with edits", () => {
  test("edits apply in order, each to the text the previous left", async () => {
    fx.write({ "me/a.txt": "one two three\nfour\n" });
    await call("read_file", { path: "me/a.txt" });
    const r = await call("edit_file", {
      path: "me/a.txt",
      edits: [
        { old_string: "one", new_string: "1" },
        { old_string: "1 two", new_string: "12" },
        { old_string: "o", new_string: "0", replace_all: true },
      ],
    });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(read("me/a.txt"), "12 three\nf0ur\n");
    assert.equal(r.result.replacements, 3);
    assert.deepEqual(r.result.replacements_per_edit, [1, 1, 1]);
  });

  test("one failing edit (the last) leaves the file as it was, and names the edit", async () => {
    fx.write({ "me/b.txt": "alpha\nbeta\nbeta\n" });
    await call("read_file", { path: "me/b.txt" });
    let r = await call("edit_file", {
      path: "me/b.txt",
      edits: [
        { old_string: "alpha", new_string: "A" },
        { old_string: "gamma", new_string: "G" },
      ],
    });
    assert.equal(r.status, "error");
    assert.match(r.message, /^Edit 2 of 2: /);
    assert.equal(read("me/b.txt"), "alpha\nbeta\nbeta\n");
    r = await call("edit_file", {
      path: "me/b.txt",
      edits: [
        { old_string: "alpha", new_string: "A" },
        { old_string: "beta", new_string: "B" },
      ],
    });
    assert.equal(r.status, "error");
    assert.equal(r.code, "ECOUNT");
    assert.match(r.message, /^Edit 2 of 2: .*2 times/);
    assert.equal(read("me/b.txt"), "alpha\nbeta\nbeta\n");
  });

  test("edits and old_string together, or neither, are errors", async () => {
    fx.write({ "me/c.txt": "c\n" });
    await call("read_file", { path: "me/c.txt" });
    const both = await call("edit_file", {
      path: "me/c.txt",
      old_string: "c",
      new_string: "d",
      edits: [{ old_string: "c", new_string: "e" }],
    });
    assert.equal(both.status, "error");
    assert.equal((await call("edit_file", { path: "me/c.txt" })).status, "error");
    assert.equal(read("me/c.txt"), "c\n");
  });
});

describe("dry_run on every write tool", () => {
  test("write_file, edit_file, sed, hash_edit, apply_patch, move_file, delete_file, create_directory write nothing", async () => {
    fx.write({ "dr/a.txt": "alpha\nbeta\n" });
    await call("read_file", { path: "dr/a.txt" });
    const anchors = await call("read_file", { path: "dr/a.txt", anchors: true, force: true });
    const firstAnchor = /(\d+#[A-Za-z0-9]+)\|/.exec(JSON.stringify(anchors.result))?.[1];
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ["write_file", { path: "dr/a.txt", content: "new\n" }, /-alpha\n-beta\n\+new/],
      ["write_file", { path: "dr/new.txt", content: "made\n" }, /\+made/],
      ["edit_file", { path: "dr/a.txt", old_string: "alpha", new_string: "ALPHA" }, /-alpha\n\+ALPHA/],
      ["edit_file", { path: "dr/a.txt", edits: [{ old_string: "beta", new_string: "B" }] }, /-beta\n\+B/],
      ["sed", { path: "dr/a.txt", pattern: "beta", replacement: "BETA" }, /\+BETA/],
      ["apply_patch", { patch: "*** Begin Patch\n*** Update File: dr/a.txt\n@@\n-alpha\n+x\n*** End Patch" }, /\+x/],
      ["move_file", { from: "dr/a.txt", to: "dr/b.txt" }, /\+\+\+ b\/dr\/b.txt/],
      ["delete_file", { path: "dr/a.txt" }, /\+\+\+ \/dev\/null/],
    ];
    if (firstAnchor)
      calls.push(["hash_edit", { path: "dr/a.txt", edits: [{ op: "delete", pos: firstAnchor }] }, /-alpha/]);
    for (const [tool, args, diff] of calls) {
      const r = await call(tool, { ...args, dry_run: true });
      assert.equal(r.status, "ok", `${tool}: ${JSON.stringify(r)}`);
      assert.equal(r.result.dry_run, true);
      assert.equal(r.result.written, false);
      assert.match(r.result.diff, diff, tool);
      assert.equal(read("dr/a.txt"), "alpha\nbeta\n", tool);
    }
    assert.ok(firstAnchor, "hash_edit was tried");
    const mk = await call("create_directory", { path: "dr/sub", dry_run: true });
    assert.equal(mk.result.written, false);
    for (const f of ["dr/new.txt", "dr/b.txt", "dr/sub"]) assert.equal(existsSync(path.join(fx.root, f)), false, f);
    // Nothing was recorded: the real edit, based on the first read, still lands.
    const real = await call("edit_file", { path: "dr/a.txt", old_string: "alpha", new_string: "A" });
    assert.equal(real.status, "ok", JSON.stringify(real));
  });

  test("a dry run is refused where the real call would be (an unread file)", async () => {
    fx.write({ "dr/unread.txt": "u\n" });
    const r = await call("edit_file", { path: "dr/unread.txt", old_string: "u", new_string: "v", dry_run: true });
    assert.equal(r.status, "refused");
    const w = await call("write_file", { path: "dr/unread.txt", content: "v", dry_run: true });
    assert.equal(w.status, "refused");
    assert.equal(read("dr/unread.txt"), "u\n");
  });
});

test("edit_file edits: the approval diff replays to the written bytes (fast-check)", async () => {
  const box: { seen?: ApprovalRequest } = {};
  const approver: Approver = {
    name: "recorder",
    async request(req) {
      if (req.tool === "edit_file") box.seen = req;
      return { approved: true, by: "test" };
    },
  };
  const h = await fx.host({ envelope: "strict", approver });
  // "\\r" (a backslash and r) must stay apart from a lone CR in an escaped diff.
  const WORD = fc.constantFrom("a", "bb", " ", "\t", "x y", "ü", "\n", "}", "end", "\\r");
  let n = 0;
  let applied = 0;
  let loneCrs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(WORD, { minLength: 3, maxLength: 60 }),
      fc.boolean(),
      fc.array(
        fc.record({
          at: fc.nat(),
          len: fc.integer({ min: 1, max: 6 }),
          to: fc.array(WORD, { maxLength: 3 }),
          splitCrlf: fc.boolean(),
        }),
        {
          minLength: 1,
          maxLength: 5,
        },
      ),
      async (words, crlf, picks) => {
        let text = words.join("");
        if (crlf) text = text.replace(/\n/g, "\r\n");
        const rel = `fc/f${n++}.txt`;
        fx.write({ [rel]: text });
        assert.equal((await h.call("read_file", { path: rel })).status, "ok");
        // Each edit's old_string is cut from the text the edits before it leave (simulated here).
        let cur = text;
        const edits = [];
        for (const p of picks) {
          // Half the picks in a CRLF file start between a CR and its LF, which leaves a lone CR.
          const crlfAt = p.splitCrlf ? cur.indexOf("\r\n", p.at % cur.length) : -1;
          const at = crlfAt === -1 ? p.at % cur.length : crlfAt + 1;
          const old = cur.slice(at, at + p.len);
          const neu = p.to.join("");
          if (old === neu || old === "") continue;
          const all = cur.split(old).length > 2;
          edits.push({ old_string: old, new_string: neu, ...(all ? { replace_all: true } : {}) });
          cur = all ? cur.split(old).join(neu) : cur.replace(old, () => neu);
        }
        if (edits.length === 0) return;
        box.seen = undefined;
        const r = await h.call("edit_file", { path: rel, edits });
        if (r.status !== "ok") return; // a CRLF file can read an LF needle differently: then nothing may change
        const written = readFileSync(path.join(fx.root, rel), "utf8");
        const req = lastRequest(box);
        assert.ok(req?.diff !== undefined, "the approver saw a diff");
        // Cutting a CRLF pair leaves a lone CR, which the approver sees escaped (`\r`, backslashes
        // doubled): read back as the note says, that diff replays too.
        // (A CR that ends the file, before "\ No newline at end of file", is shown as it is: it hides nothing.)
        assert.equal(hasHidden(req.diff), false, "a hidden character reached the approver");
        const escaped = /shown escaped/.test(req.diffNote ?? "");
        const diff = escaped ? readDiff(req.diff) : req.diff;
        assert.equal(applyPatch(text, diff, { autoConvertLineEndings: false }), written);
        applied++;
        if (escaped) loneCrs++;
      },
    ),
    { numRuns: 120, seed: Number(process.env.LATCH_EDITS_SEED ?? 16003) },
  );
  assert.ok(applied >= 60, `most edit lists applied (${applied})`);
  assert.ok(loneCrs >= 5, `edits that split a CRLF pair were among them (${loneCrs})`);
});

function lastRequest(box: { seen?: ApprovalRequest }): ApprovalRequest | undefined {
  return box.seen;
}
