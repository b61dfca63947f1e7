// Diff replay (fast-check): for random multi-file patches (updates with several chunks, moves,
// deletions, additions, lone CRs), the diff the approver saw, applied file by file to the old content, gives
// exactly what apply_patch then wrote.
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { applyPatch, parsePatch } from "diff";
import fc from "fast-check";
import type { ApprovalRequest, Approver } from "../../../src/approval/approver.js";
import { hasHidden, readDiff } from "../../../src/approval/visible.js";
import { makeFixture } from "../../helpers/fixture.js";

// "lone\rcr" puts a lone carriage return in a line (shown escaped to the approver), "\\r" its look-alike.
const WORD = fc.constantFrom(
  "alpha",
  "beta",
  "x",
  "  indent",
  "\ttab",
  "",
  "ünï",
  "end;",
  "}",
  "a b",
  "lone\rcr",
  "\\r",
);
const LINES = fc.array(WORD, { minLength: 1, maxLength: 25 });

interface FileCase {
  lines: string[];
  eol: "\n" | "\r\n";
  action: "update" | "move" | "delete";
  cuts: { at: number; remove: number; insert: string[] }[];
}

const FILE: fc.Arbitrary<FileCase> = fc
  .record({
    lines: LINES,
    eol: fc.constantFrom<"\n" | "\r\n">("\n", "\n", "\r\n"),
    action: fc.constantFrom<FileCase["action"]>("update", "update", "move", "delete"),
    cuts: fc.array(fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), insert: fc.array(WORD, { maxLength: 3 }) }), {
      minLength: 1,
      maxLength: 4,
    }),
  })
  .map((f) => {
    // Disjoint, ordered regions inside the file, each with a line of context kept between them.
    const cuts: FileCase["cuts"] = [];
    let from = 0;
    for (const c of [...f.cuts].sort((a, b) => a.at - b.at)) {
      const at = from + (c.at % Math.max(1, f.lines.length - from));
      if (at >= f.lines.length) break;
      const remove = Math.min(c.remove, f.lines.length - at);
      if (remove === 0 && c.insert.length === 0) continue;
      cuts.push({ at, remove, insert: c.insert });
      from = at + remove + 1;
    }
    return { ...f, cuts };
  });

function chunkLines(f: FileCase): string[] {
  const out: string[] = [];
  for (const c of f.cuts) {
    out.push("@@");
    if (c.at > 0) out.push(` ${f.lines[c.at - 1]}`);
    for (const l of f.lines.slice(c.at, c.at + c.remove)) out.push(`-${l}`);
    for (const l of c.insert) out.push(`+${l}`);
    if (c.at + c.remove < f.lines.length) out.push(` ${f.lines[c.at + c.remove]}`);
  }
  return out;
}

/** Read through a function, so the checker does not keep the narrowing from before the call that set it. */
function lastRequest(box: { seen?: ApprovalRequest }): ApprovalRequest | undefined {
  return box.seen;
}

const fx = makeFixture();
after(() => fx.cleanup());

test("apply_patch: the approval diff replays to the written bytes (fast-check)", async () => {
  const box: { seen?: ApprovalRequest } = {};
  const approver: Approver = {
    name: "recorder",
    async request(req) {
      if (req.tool === "apply_patch") box.seen = req;
      return { approved: true, by: "test" };
    },
  };
  const host = await fx.host({ envelope: "strict", approver });
  let round = 0;
  let applied = 0;
  let escapedRounds = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(FILE, { minLength: 1, maxLength: 3 }), fc.option(LINES), async (files, added) => {
      round++;
      const dir = `r${round}`;
      const olds = new Map<string, string>();
      const parts = ["*** Begin Patch"];
      for (const [i, f] of files.entries()) {
        const rel = `${dir}/f${i}.txt`;
        const content = f.lines.join(f.eol) + f.eol;
        olds.set(rel, content);
        fx.write({ [rel]: content });
        assert.equal((await host.call("read_file", { path: rel })).status, "ok");
        if (f.action === "delete") parts.push(`*** Delete File: ${rel}`);
        else {
          parts.push(`*** Update File: ${rel}`);
          if (f.action === "move") parts.push(`*** Move to: ${dir}/moved/f${i}.txt`);
          if (f.cuts.length === 0) parts.push("@@", `+extra`);
          parts.push(...chunkLines(f));
        }
      }
      if (added) parts.push(`*** Add File: ${dir}/added.txt`, ...added.map((l) => `+${l}`));
      parts.push("*** End Patch");
      box.seen = undefined;
      const r = await host.call("apply_patch", { patch: parts.join("\n") });
      if (r.status !== "ok") return; // a chunk whose context repeats may not place: then nothing may change
      applied++;
      const req = lastRequest(box);
      assert.ok(req?.diff !== undefined, "the approver saw a diff");
      assert.equal(hasHidden(req.diff), false, "a hidden character reached the approver");
      // A lone CR is shown as `\r` and backslashes doubled (the note says so): read back, the diff replays.
      const notes = req.diffNote === undefined ? [] : req.diffNote.split("; ");
      const isEscapeNote = (n: string) => n.startsWith("control characters in the diff are shown escaped");
      const escaped = notes.some(isEscapeNote);
      if (escaped) escapedRounds++;
      // Any other note but "no change" (a chunk that puts back what it takes out) means a cut diff.
      const others = notes.filter(
        (n) => !isEscapeNote(n) && !n.endsWith(": no change: the new content equals the current content"),
      );
      assert.deepEqual(others, [], "the diff is whole");
      const diff = escaped ? readDiff(req.diff) : req.diff;
      const byNew = new Map(parsePatch(diff).map((p) => [p.newFileName, p]));
      const byOld = new Map(parsePatch(diff).map((p) => [p.oldFileName, p]));
      for (const [i, f] of files.entries()) {
        const rel = `${dir}/f${i}.txt`;
        const old = olds.get(rel)!;
        if (f.action === "delete") {
          assert.equal(existsSync(path.join(fx.root, rel)), false);
          assert.equal(applyPatch(old, byOld.get(`a/${rel}`)!), "");
          continue;
        }
        const dest = f.action === "move" ? `${dir}/moved/f${i}.txt` : rel;
        const written = readFileSync(path.join(fx.root, dest), "utf8");
        const p = byNew.get(`b/${dest}`);
        if (!p && notes.includes(`${dest}: no change: the new content equals the current content`)) {
          assert.equal(written, old, `${dest}: unchanged`);
          continue;
        }
        assert.ok(p, `a diff section for ${dest}`);
        assert.equal(applyPatch(old, p), written, `${dest}: diff replays`);
      }
      if (added) {
        const written = readFileSync(path.join(fx.root, `${dir}/added.txt`), "utf8");
        assert.equal(applyPatch("", byNew.get(`b/${dir}/added.txt`)!), written);
      }
      rmSync(path.join(fx.root, dir), { recursive: true, force: true });
    }),
    { numRuns: 80, seed: Number(process.env.LATCH_PATCH_SEED ?? 16016) },
  );
  assert.ok(applied >= 40, `most patches applied (${applied} of ${round})`);
  assert.ok(escapedRounds >= 10, `patches whose diff holds a lone CR were among them (${escapedRounds})`);
});
