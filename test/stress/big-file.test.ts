// read_file_range near the end of a 2 GiB file: the child's peak RSS stays under 150 MB.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";

const READER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../helpers/range-rss.mjs");
const LINE = 64;
const BLOCK_LINES = 16384; // 1 MiB blocks
const BLOCKS = 2048; // 2 GiB

test("read_file_range deep in a 2 GiB file keeps memory flat", async () => {
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
  console.log(`# peak RSS ${(maxRssKiB / 1024).toFixed(1)} MiB for a window at line ${total - 2} of a 2 GiB file`);
  assert.ok(maxRssKiB < 150 * 1024, `peak RSS ${maxRssKiB} KiB`);
});
