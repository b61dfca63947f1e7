// The approval diff replays the exact mutation: for random files, edit_file and sed calls (line
// ranges, counts, replace-all, CRLF, lone CRs, no final newline), the diff the approver saw, applied to the old
// content, gives exactly what was then written.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { applyPatch } from "diff";
import type { ApprovalRequest, Approver } from "../../src/approval/approver.js";
import { hasHidden, readDiff } from "../../src/approval/visible.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture } from "../helpers/fixture.js";
import { rng } from "../helpers/rng.js";

// "a\\rb" (a backslash and r) is what a lone CR looks like once escaped: the two must stay apart.
const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "x",
  "y",
  "  indent",
  "\ttab",
  "",
  "foo(bar)",
  "ünïcode",
  "END",
  "a\\rb",
];

describe("approval diffs replay the exact mutation", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("≥ 200 random edit_file and sed calls: diff applied to the old content = what was written", async () => {
    const seed = Number(process.env.LATCH_DIFF_SEED ?? 20261130);
    const rand = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

    let lastWrite: ApprovalRequest | undefined;
    const approver: Approver = {
      name: "recorder",
      async request(req) {
        if (req.tool !== "read_file") lastWrite = req;
        return { approved: true, by: "test" };
      },
    };
    const host = await fx.host({ envelope: "strict", approver });
    let checked = 0;
    let failedCalls = 0;
    let escaped = 0;
    for (let i = 0; checked < 220 && i < 1000; i++) {
      const nl = rand() < 0.2 ? "\r\n" : "\n";
      const lines = Array.from({ length: int(1, 40) }, () =>
        Array.from({ length: int(1, 3) }, () => pick(WORDS)).join(" "),
      );
      const content = lines.join(nl) + (rand() < 0.8 ? nl : "");
      const rel = `f${i}.txt`;
      writeFileSync(path.join(fx.root, rel), content);
      assert.equal((await host.call("read_file", { path: rel })).status, "ok");

      // A needle that is in the file (most of the time), cut from a random place.
      const from = int(0, Math.max(0, content.length - 1));
      const needle = content.slice(from, from + int(1, 24)) || "alpha";
      let args: Record<string, unknown>;
      let tool: string;
      if (rand() < 0.5) {
        tool = "edit_file";
        args = {
          path: rel,
          old_string: needle,
          new_string: pick(["", "NEW", "two\nlines", needle + "!", "π", "lone\rcr"]),
          ...(rand() < 0.5 ? { replace_all: true } : {}),
        };
      } else {
        tool = "sed";
        const start = int(1, lines.length);
        const end = rand() < 0.5 ? undefined : int(start, lines.length + 2);
        const word = pick(WORDS.filter((w) => w !== "")).trim();
        args = {
          path: rel,
          pattern: word,
          replacement: pick(["Z", "", "zz zz", word.toUpperCase()]),
          ...(rand() < 0.6 ? { start_line: start } : {}),
          ...(end !== undefined ? { end_line: end } : {}),
        };
        if (rand() < 0.5) args.all = true;
        if (rand() < 0.3) args.expect_replacements = int(0, 4);
      }
      lastWrite = undefined;
      const before = readFileSync(path.join(fx.root, rel));
      const out = await host.call(tool, args);
      const after = readFileSync(path.join(fx.root, rel));
      if (out.status !== "ok") {
        // The transform failed (no match, wrong count): the preview failed the same way before anyone
        // was asked, so nobody was, and nothing changed.
        failedCalls++;
        assert.equal(lastWrite, undefined, `case ${i}: a person was asked about a call that fails its own checks`);
        assert.ok(before.equals(after), `case ${i}: a failed call changed the file`);
        continue;
      }
      assert.ok(lastWrite, `case ${i}: the write was not sent for approval`);
      const req = lastWrite as ApprovalRequest;
      const written = expectOk<{ written: boolean }>(out).result.written;
      if (!written) {
        assert.ok(before.equals(after));
        continue;
      }
      assert.ok(req.diff, `case ${i}: no diff (${req.diffNote})`);
      assert.equal(hasHidden(req.diff), false, `case ${i}: a hidden character reached the approver`);
      let diff = req.diff;
      if (req.diffNote?.includes("shown escaped")) {
        // A lone carriage return (in the new text, or an edit that split a CRLF) is shown as `\r`, backslashes doubled:
        // read back as the note says, the diff replays too.
        assert.match(req.diff, /\\r/);
        diff = readDiff(req.diff);
        escaped++;
      } else assert.equal(req.diffNote, undefined, `case ${i}: ${req.diffNote}`);
      const replayed = applyPatch(before.toString("utf8"), diff);
      assert.equal(
        replayed,
        after.toString("utf8"),
        `case ${i} (seed ${seed}): ${tool} ${JSON.stringify(args)}\n${diff}`,
      );
      checked++;
    }
    assert.ok(checked >= 200, `only ${checked} writes were checked (and ${failedCalls} calls failed)`);
    assert.ok(escaped >= 10, `only ${escaped} writes left a lone CR (new text with one, or an edit splitting a CRLF)`);
  });

  test("a new file shows as an addition; a big file's one-line edit is diffed exactly; a long change is cut with a marker", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await fx.host({
      envelope: "strict",
      approver: { name: "r", request: async (req) => (seen.push(req), { approved: true, by: "test" }) },
    });
    await host.call("write_file", { path: "new/dir/n.txt", content: "a\nb" });
    assert.equal(
      seen[0].diff,
      "--- /dev/null\n+++ b/new/dir/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n",
    );

    const big = Array.from({ length: 5000 }, (_, k) => `line ${k + 1}`).join("\n") + "\n";
    fx.write({ "big.txt": big });
    await host.call("read_file_range", { path: "big.txt", start_line: 1, end_line: 2 });
    seen.length = 0;
    const out = await host.call("edit_file", { path: "big.txt", old_string: "line 4000\n", new_string: "LINE 4000\n" });
    assert.equal(out.status, "ok");
    const d = seen.find((r) => r.tool === "edit_file")!;
    assert.equal(
      d.diff,
      "--- a/big.txt\n+++ b/big.txt\n@@ -3997,7 +3997,7 @@\n line 3997\n line 3998\n line 3999\n-line 4000\n+LINE 4000\n line 4001\n line 4002\n line 4003\n",
    );
    assert.equal(applyPatch(big, d.diff), readFileSync(path.join(fx.root, "big.txt"), "utf8"));

    seen.length = 0;
    const now = readFileSync(path.join(fx.root, "big.txt"), "utf8");
    await host.call("read_file_range", { path: "big.txt", start_line: 1, end_line: 2 });
    await host.call("sed", { path: "big.txt", pattern: "line", replacement: "row", all: true });
    const cut = seen.find((r) => r.tool === "sed")!;
    const shown = cut.diff!.trimEnd().split("\n");
    assert.equal(shown.length, 121);
    assert.match(shown[120], /^\\ latch: diff cut here/);
    assert.match(cut.diffNote!, /longer than 500 lines on a side.*only the first 120/);
    assert.notEqual(readFileSync(path.join(fx.root, "big.txt"), "utf8"), now);
  });

  test("no diff where the content cannot be shown safely: binary content, a symlink", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await fx.host({
      envelope: "strict",
      approver: { name: "r", request: async (req) => (seen.push(req), { approved: false, by: "test" }) },
    });
    await host.call("write_file", { path: "bin.dat", content: "a\u0000b" });
    assert.equal(seen[0].diff, undefined);
    assert.match(seen[0].diffNote!, /not UTF-8 text/);
    assert.equal(existsSync(path.join(fx.root, "bin.dat")), false);
  });
});
