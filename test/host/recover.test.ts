// The next start removes what a killed latch run left (src/host/recover.ts): here a run record, as a
// SIGKILLed `latch mcp` leaves it, that lists temp files whose names are not plain UTF-8 text. The
// whole kill-and-restart path over real stdio is in test/stress/shutdown.test.ts. And a long run's own
// record, compacted to the temp files still live once it passes 1 MiB.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { writeAtomic } from "../../src/fs/atomic-write.js";
import { tempWatch } from "../../src/fs/temp-names.js";
import { bytesToInternal, osPath } from "../../src/fs/names.js";
import { PLACE } from "../../src/fs/owner.js";
import { openStateDir } from "../../src/fs/state.js";
import { startRun } from "../../src/host/recover.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());

test("a dead run's temp files are removed at the next start, a non-UTF-8 or newline name included", () => {
  const dead = Number(
    execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }),
  );
  const state = openStateDir(path.join(fx.base, "st-recover"));
  const dir = path.join(fx.root, "killed");
  mkdirSync(dir);
  const suffix = `.latch-${dead}-${PLACE.slice(0, 4)}89abcdef.tmp`;
  const names = [
    Buffer.from(".plain.txt" + suffix),
    Buffer.concat([Buffer.from(".bad"), Buffer.from([0xfe]), Buffer.from(".txt" + suffix)]),
    Buffer.from(".a\nb.txt" + suffix),
  ];
  // As the killed run wrote them: each temp file on disk, and its internal name in the run's record.
  const temps = names.map((n) => path.join(dir, bytesToInternal(n)));
  for (const t of temps) writeFileSync(osPath(t), "half of it");
  mkdirSync(path.join(state.dir, "runs"), { recursive: true });
  const record = path.join(state.dir, "runs", `${PLACE}-${dead}-1`);
  writeFileSync(record, temps.map((t) => JSON.stringify(t) + "\n").join(""));

  const run = startRun(state);
  try {
    assert.equal(run.recovered.runs, 1);
    assert.equal(run.recovered.temps, 3, "every listed temp file was removed");
    assert.deepEqual(readdirSync(dir), []);
    assert.equal(existsSync(record), false, "the dead run's record is gone");
  } finally {
    run.end();
  }
});

test("a lock removal cut short by a kill (its `.gone-` folder) is swept at the next start once old", () => {
  const state = openStateDir(path.join(fx.base, "st-gone"));
  const old = path.join(state.locks, "a".repeat(64) + ".lock.gone-0123456789ab");
  const fresh = path.join(state.locks, "b".repeat(64) + ".lock.gone-ba9876543210");
  for (const p of [old, fresh]) {
    mkdirSync(p);
    writeFileSync(path.join(p, "owner"), "");
  }
  const longAgo = new Date(Date.now() - 60_000);
  utimesSync(old, longAgo, longAgo);
  const run = startRun(state);
  try {
    assert.equal(existsSync(old), false, "the old leftover is gone");
    assert.equal(existsSync(fresh), true, "a removal that may still be under way is left to its remover");
  } finally {
    run.end();
  }
});

test("a long run's record is compacted past 1 MiB to the temp files still live, and grows on from there", () => {
  const state = openStateDir(path.join(fx.base, "st-compact"));
  const dir = path.join(fx.root, "compact");
  mkdirSync(dir);
  const run = startRun(state);
  const [record] = readdirSync(path.join(state.dir, "runs")).map((n) => path.join(state.dir, "runs", n));
  const name = (i: number) => path.join(dir, `.f${i}.txt.latch-${process.pid}-${"0".repeat(150)}${i}.tmp`);
  const live = [name(0), name(1)];
  try {
    // Two writes still under way, then 6,000 that came and went (their temp files renamed away): about
    // 1.2 MB of lines, past the 1 MiB at which the record is rewritten with only the live ones.
    for (const t of live) {
      writeFileSync(t, "half of it");
      tempWatch.live.add(t);
      tempWatch.created!(t);
    }
    for (let i = 2; i < 6_002; i++) tempWatch.created!(name(i));
    const lines = readFileSync(record, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string);
    assert.ok(lines.length < 6_000, `the record was compacted: ${lines.length} lines`);
    for (const t of live) assert.ok(lines.includes(t), `the live temp file ${path.basename(t)} is still listed`);
    assert.ok(!lines.includes(name(2)), "a temp file gone before the compaction is no longer listed");
    assert.equal(lines.at(-1), name(6_001), "lines after the compaction are appended");
  } finally {
    for (const t of live) tempWatch.live.delete(t);
    run.end();
  }
});

test("a temp file is live from the moment the run record names it, so a compaction meanwhile keeps its line", async () => {
  // A large write awaits its temp file's open (the thread pool) after naming it; another write that
  // compacts the record then (past 1 MiB) writes out the live temp files only.
  const seen: boolean[] = [];
  const before = tempWatch.created;
  tempWatch.created = (tmp) => seen.push(tempWatch.live.has(tmp));
  try {
    const rel = "large-compact.bin";
    await writeAtomic({ abs: path.join(fx.root, rel), rel }, Buffer.alloc(2 << 20, 7));
  } finally {
    tempWatch.created = before;
  }
  assert.deepEqual(seen, [true], "named in the record before it was live");
});
