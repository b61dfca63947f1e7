// read_file_range near the end of a big file: the child's peak RSS stays under 150 MB. The file is
// 2 GiB under LATCH_STRESS=1 and 512 MiB in `npm test`: a reader that holds the file, or its text, in
// memory still passes 150 MB three times over; writing and reading 2 GiB took 24 s of the suite.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { stressCount } from "../helpers/stress.js";

const READER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/range-rss.mjs");
const LINE = 64;
const BLOCK_LINES = 16384; // 1 MiB blocks
const BLOCKS = stressCount(512, 2048); // 512 MiB, 2 GiB

test(`read_file_range deep in a ${BLOCKS} MiB file keeps memory flat`, async () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  const fd = openSync(path.join(fx.root, "huge.log"), "w");
  const filler = Buffer.from(`${"f".repeat(LINE - 1)}\n`.repeat(BLOCK_LINES));
  for (let b = 0; b < BLOCKS - 1; b++) writeSync(fd, filler);
  const tail = Array.from(
    { length: BLOCK_LINES },
    (_, i) => `tail ${String(i).padStart(8, "0")}`.padEnd(LINE - 1, ".") + "\n",
  ).join("");
  writeSync(fd, tail);
  closeSync(fd);
  const total = BLOCKS * BLOCK_LINES;

  const { stdout } = await promisify(execFile)(
    process.execPath,
    [READER, fx.root, fx.state, "huge.log", String(total - 2)],
    { maxBuffer: 1 << 20 },
  );
  const { out, maxRssKiB } = JSON.parse(stdout);
  assert.equal(out.status, "ok", JSON.stringify(out).slice(0, 500));
  assert.equal(out.result.total_lines, total);
  assert.equal(out.result.content, tail.split("\n").slice(-4, -1).join("\n") + "\n");
  console.log(
    `# peak RSS ${(maxRssKiB / 1024).toFixed(1)} MiB for a window at line ${total - 2} of a ${BLOCKS} MiB file`,
  );
  assert.ok(maxRssKiB < 150 * 1024, `peak RSS ${maxRssKiB} KiB`);
});
