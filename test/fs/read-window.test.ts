// readLineWindow against a plain reference (split the file into lines, keep whole lines while they
// fit): random files, windows and budgets, read from disk (one chunk, and several for files past the
// 1 MiB read) and from a client's whole text. The window's lines are taken a chunk at a time when
// the rest of a chunk fits, and one at a time otherwise: both must give the reference's answer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readLineWindow, type LineWindow } from "../../src/fs/read-lines.js";
import type { FileBackend } from "../../src/fs/backend.js";
import { sha256 } from "../../src/fs/text.js";
import { stressCount } from "../helpers/stress.js";

/** Random files: 200 in npm test (ten read in several chunks; each mutation of the chunk path tried fails it), 2,000 under test:stress. */
const FILES = stressCount(200, 2000, "LATCH_READ_WINDOW_FILES");

type Window = Omit<LineWindow, "content"> & { content: string };

/** The window as read_file documents it, from the whole file at once. */
function reference(bytes: Buffer, start: number, end: number | undefined, budget: number): Window {
  const lines: Buffer[] = [];
  for (let from = 0; from < bytes.length;) {
    const nl = bytes.indexOf(10, from);
    const stop = nl === -1 ? bytes.length : nl + 1;
    lines.push(bytes.subarray(from, stop));
    from = stop;
  }
  const totalLines = lines.length;
  const last = Math.min(end ?? totalLines, totalLines);
  const kept: Buffer[] = [];
  let size = 0;
  let endLine = start - 1;
  let nextStartLine: number | undefined;
  let cutLine: number | undefined;
  for (let n = start; n <= last; n++) {
    const line = lines[n - 1];
    if (size + line.length <= budget) {
      kept.push(line);
      size += line.length;
      endLine = n;
      continue;
    }
    if (n === start) {
      kept.push(line.subarray(0, budget));
      endLine = n;
      cutLine = n;
      nextStartLine = n + 1;
    } else nextStartLine = endLine + 1;
    break;
  }
  if (nextStartLine !== undefined && nextStartLine > totalLines) nextStartLine = undefined;
  return {
    content: Buffer.concat(kept).toString("utf8"),
    startLine: start,
    endLine: Math.min(endLine, totalLines),
    totalLines,
    bytes: bytes.length,
    sha256: sha256(bytes),
    nextStartLine,
    cutLine,
  };
}

/** A deterministic generator, so a failure names the seed that reproduces it. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function makeFile(r: () => number, big: boolean): Buffer {
  const target = big ? 1_100_000 + Math.floor(r() * 1_500_000) : Math.floor(r() * 3000);
  const parts: string[] = [];
  let size = 0;
  while (size < target) {
    const kind = r();
    const len =
      kind < 0.05 ? 0 : kind < 0.1 ? 2000 + Math.floor(r() * 300_000 * (big ? 1 : 0.01)) : Math.floor(r() * 60);
    const line = "x".repeat(len) + (r() < 0.1 ? "é" : "") + (r() < 0.1 ? "\r\n" : "\n");
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  let text = parts.join("");
  if (r() < 0.4) text = text.slice(0, -1); // no final newline
  return Buffer.from(text);
}

function clientFiles(bytes: Buffer): FileBackend {
  return { kind: "client", read: async () => bytes } as unknown as FileBackend;
}

test("a line window equals the reference's for random files, windows and budgets, from disk and from a client", async () => {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-window-")));
  try {
    for (let seed = 1; seed <= FILES; seed++) {
      const r = rng(seed);
      const big = seed % 20 === 0; // one in twenty past the 1 MiB read: several chunks
      const bytes = makeFile(r, big);
      const file = path.join(dir, `f${seed}.txt`);
      writeFileSync(file, bytes);
      const target = { input: `f${seed}.txt`, abs: file, rel: `f${seed}.txt`, exists: true };
      const total =
        bytes.length === 0 ? 0 : bytes.toString("latin1").split("\n").length - (bytes.at(-1) === 10 ? 1 : 0);
      for (let k = 0; k < (big ? 12 : 8); k++) {
        // A big file's whole-file windows run out of budget just past its first 1 MiB read, where a
        // chunk taken whole meets the next chunk's lines taken one at a time.
        const edge = big && k % 2 === 0;
        const start = edge || r() < 0.5 ? 1 : 1 + Math.floor(r() * (total + 2));
        const end = edge || r() < 0.5 ? undefined : start + Math.floor(r() * (total + 2));
        const budget = edge
          ? 2 ** 20 - 100_000 + Math.floor(r() * 500_000)
          : r() < 0.3
            ? 1 + Math.floor(r() * 200)
            : r() < 0.5
              ? bytes.length + 10
              : 1 + Math.floor(r() * (bytes.length + 10));
        const want = reference(bytes, start, end, budget);
        const req = { start, end, maxOutputBytes: budget };
        const fromDisk = await readLineWindow(target, req);
        assert.deepEqual(
          { ...fromDisk },
          want,
          `seed ${seed}, window ${start}-${end ?? "end"}, budget ${budget}, from disk`,
        );
        const fromClient = await readLineWindow(target, req, clientFiles(bytes));
        assert.deepEqual(
          { ...fromClient },
          want,
          `seed ${seed}, window ${start}-${end ?? "end"}, budget ${budget}, from a client`,
        );
      }
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
