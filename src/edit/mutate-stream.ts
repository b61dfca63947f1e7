// edit_file on a file too large to hold in memory: the same lock, folder re-check, open checks and
// read-before-write as mutate() (shared with it, not copied), in two streamed passes over the file.
// Pass 1 hashes the current content (the ledger's key), checks UTF-8, counts line endings and counts
// the needle; pass 2 writes the edited stream into a temp file beside the target (fsync, rename,
// as writeAtomic), hashing what it reads and what it writes. The read side must hash the same as in
// pass 1 and the file must still be the same inode, size and mtime before the rename, or nothing is
// changed. Memory stays at a few chunks whatever the file size.
import { createHash } from "node:crypto";
import { lstatSync, type Stats } from "node:fs";
import path from "node:path";
import type { FileHandle } from "node:fs/promises";
import { cancelled, ToolError } from "../errors.js";
import { writeAtomicWith } from "../fs/atomic-write.js";
import { changedSinceRead, type ReadPin } from "../fs/same-file.js";
import { countLf, LineEnds, NeedleStream } from "../fs/byte-stream.js";
import { Utf8Check } from "../fs/utf8.js";
import { openCurrentPinned } from "../fs/current.js";
import {
  checkBase,
  checkExpected,
  checkReadBeforeWrite,
  keepPreImages,
  underMutationLock,
  writeWithMarker,
  type MutationContext,
} from "./mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
import { missingFile, noMatch, notUtf8, tooMany, type ContentFacts } from "./replace.js";
import { humanSize, toCrlf } from "../fs/text.js";
import { lstatBeneath } from "../fs/beneath.js";
import { showName } from "../fs/names.js";

/** Files larger than this are edited by streaming; smaller ones in memory, with closest-lines hints. */
export const STREAM_EDIT_ABOVE = 8 * 1024 * 1024;
const CHUNK = 1 << 20;

export interface StreamReplace {
  target: ResolvedPath;
  find: string;
  replace: string;
  all: boolean;
  /** As Mutation.expectSha: the content this edit is based on. */
  expectSha?: string | null;
  /** As Mutation.expected: the client's expected_sha256. */
  expected?: string;
}

export interface StreamOptions {
  chunkBytes?: number;
  /**
   * The size the caller chose this path by (edit_file: isLargeFile, a look before the lock): the file
   * pinned under the lock must still be over it, else the write is refused as changed. A file swapped
   * for a large one for that look, and back, would take a small file past the byte re-read that
   * mutate()'s path makes before its rename (review g67).
   */
  above?: number;
  /** Test seam: runs between the two passes, to change the file under the edit. */
  afterSurvey?: () => Promise<void>;
}

export interface StreamOutcome {
  before: ContentFacts;
  after: ContentFacts;
  written: boolean;
  replacements: number;
  warning?: string;
}

/** Whether the file at `target` is a regular file over `above` bytes (anything else takes mutate()'s path, which says why). */
export async function isLargeFile(target: ResolvedPath, above = STREAM_EDIT_ABOVE): Promise<boolean> {
  const st = (() => {
    try {
      return lstatBeneath(target);
    } catch {
      return undefined; // a folder changed on the way: mutate()'s path says so
    }
  })();
  return st !== undefined && st.isFile() && st.size > above;
}

/** Exact-string replacement, streamed: the semantics of prepareNeedle() and replaceIn(), flat memory. */
export async function replaceStreamed(
  ctx: MutationContext,
  req: StreamReplace,
  opts: StreamOptions = {},
): Promise<StreamOutcome> {
  const { target } = req;
  const chunkBytes = opts.chunkBytes ?? CHUNK;
  return underMutationLock(ctx, target, false, async () => {
    // Pinned (ReadPin): the rewrite lands in the folder read through, on the file read, or is refused.
    const { cur, pin } = await openCurrentPinned(target);
    if (cur === null) {
      pin.close();
      throw missingFile(target);
    }
    const { fh, st } = cur;
    try {
      if (opts.above !== undefined && st.size <= opts.above)
        throw changedSinceRead(target, `its size crossed ${humanSize(opts.above)}`);
      const s = await survey(fh, req, chunkBytes, ctx.signal);
      checkExpected(ctx, target, s.sha256, req.expected);
      checkBase(ctx, target, s.sha256, req.expectSha);
      const kind = checkReadBeforeWrite(ctx, target, s.sha256, "range");
      if (!s.utf8) throw notUtf8(target);
      if (s.match.count === 0) {
        throw noMatch(
          target,
          `The file is ${humanSize(s.bytes)}, too large for a closest-lines hint: find the text with grep (it gives line numbers), then read_file_range around it.`,
        );
      }
      if (s.match.count > 1 && !req.all)
        throw tooMany(target, s.match.count, await linesAt(fh, s.match.firstAt, chunkBytes));
      const before = { bytes: s.bytes, sha256: s.sha256 };
      const replacements = req.all ? s.match.count : 1;
      // Same bytes in and out (a CRLF file's needle and replacement can meet): nothing to write.
      if (s.find.equals(s.replace)) return { before, after: before, written: false, replacements };
      let after: ContentFacts | undefined;
      await opts.afterSurvey?.();
      const warning = await writeWithMarker(
        ctx,
        target,
        kind,
        (reserve, settle) =>
          writeAtomicWith(
            target,
            async (out) => {
              after = await rewrite(fh, out, s, req.all, target, chunkBytes, ctx.signal);
            },
            async () => {
              sameFile(target, st, pin);
              // Too large to hold: only its hash is kept, and an undo of this edit says so.
              await keepPreImages(ctx, [
                { target, before: { sha256: s.sha256, size: s.bytes, why: "streamed" }, afterSha: after!.sha256 },
              ]);
              await ctx.decisionSynced;
              reserve(after!.sha256);
            },
            settle,
            pin,
          ),
        s.sha256,
      );
      return { before, after: after!, written: true, replacements, ...(warning ? { warning } : {}) };
    } finally {
      await fh.close();
      pin.close();
    }
  });
}

interface Survey {
  bytes: number;
  sha256: string;
  utf8: boolean;
  /** The needle as it will be matched and written (CRLF-adjusted, as prepareNeedle does). */
  find: Buffer;
  replace: Buffer;
  match: { count: number; firstAt: number[] };
}

/** Pass 1: hash, UTF-8, line endings, and the needle counted as given and in its CRLF form. */
async function survey(fh: FileHandle, req: StreamReplace, chunkBytes: number, signal?: AbortSignal): Promise<Survey> {
  const hash = createHash("sha256");
  const utf8 = new Utf8Check();
  const ends = new LineEnds();
  // A needle that is not well-formed UTF-16 (a lone surrogate) cannot occur in well-formed text.
  const wellFormed = Buffer.from(req.find, "utf8").toString("utf8") === req.find;
  const plain = new NeedleStream(Buffer.from(req.find, "utf8"));
  const crlfForm =
    req.find.includes("\n") && !req.find.includes("\r")
      ? new NeedleStream(Buffer.from(toCrlf(req.find), "utf8"))
      : undefined;
  let bytes = 0;
  for await (const chunk of chunks(fh, chunkBytes, signal)) {
    bytes += chunk.length;
    hash.update(chunk);
    utf8.push(chunk);
    ends.push(chunk);
    if (wellFormed) {
      plain.push(chunk);
      crlfForm?.push(chunk);
    }
  }
  const crlf = ends.usesCrlf;
  const useCrlfForm = plain.count === 0 && crlf && crlfForm !== undefined && crlfForm.count > 0;
  const chosen = useCrlfForm ? crlfForm : plain;
  const replace = crlf && req.replace.includes("\n") && !req.replace.includes("\r") ? toCrlf(req.replace) : req.replace;
  return {
    bytes,
    sha256: hash.digest("hex"),
    utf8: utf8.end(),
    find: Buffer.from(useCrlfForm ? toCrlf(req.find) : req.find, "utf8"),
    replace: Buffer.from(replace, "utf8"),
    match: { count: wellFormed ? chosen.count : 0, firstAt: chosen.firstAt },
  };
}

/** Pass 2: the edited stream into `out`; refuses if what it reads is not what pass 1 hashed. */
async function rewrite(
  fh: FileHandle,
  out: FileHandle,
  s: Survey,
  all: boolean,
  target: ResolvedPath,
  chunkBytes: number,
  signal?: AbortSignal,
): Promise<ContentFacts> {
  const seen = createHash("sha256");
  const written = createHash("sha256");
  const edit = new NeedleStream(s.find, s.replace, all ? Infinity : 1);
  const sink = new ChunkWriter(out, chunkBytes);
  const emit = async (pieces: Buffer[]) => {
    for (const p of pieces) {
      written.update(p);
      await sink.write(p);
    }
  };
  for await (const chunk of chunks(fh, chunkBytes, signal)) {
    seen.update(chunk);
    await emit(edit.push(chunk));
  }
  await emit(edit.end());
  await sink.flush();
  if (seen.digest("hex") !== s.sha256) throw changedWhileWriting(target);
  return { bytes: sink.bytes, sha256: written.digest("hex") };
}

/**
 * Right before the rename: the file is still the one that was read, unchanged (a writer outside latch
 * may have replaced or rewritten it), looked up in the folder the read went through.
 */
function sameFile(target: ResolvedPath, st: Stats, pin: ReadPin): void {
  let now: Stats | undefined;
  try {
    pin.dir?.check();
    now = pin.dir
      ? lstatSync(pin.dir.at(path.posix.basename(target.rel)), { throwIfNoEntry: false })
      : lstatBeneath(target, "writing");
  } catch {
    now = undefined;
  }
  // Its ctime too: a write in place can set the mtime back (futimens), never the ctime (review g65).
  if (now === undefined) throw changedWhileWriting(target);
  const same = now.ino === st.ino && now.dev === st.dev && now.size === st.size && now.mtimeMs === st.mtimeMs;
  if (!same || now.ctimeMs !== st.ctimeMs) throw changedWhileWriting(target);
}

function changedWhileWriting(target: ResolvedPath): ToolError {
  return new ToolError(
    "ESTALE",
    `\`${showName(target.rel)}\` changed while latch was rewriting it; nothing was changed by this edit. Read it again, then retry.`,
  );
}

/** The 1-based lines holding the byte offsets `at` (ascending). */
async function linesAt(fh: FileHandle, at: number[], chunkBytes: number): Promise<number[]> {
  const lines: number[] = [];
  let pos = 0;
  let lf = 0;
  for await (const chunk of chunks(fh, chunkBytes)) {
    while (lines.length < at.length && at[lines.length] < pos + chunk.length)
      lines.push(1 + lf + countLf(chunk, at[lines.length] - pos));
    if (lines.length === at.length) break;
    lf += countLf(chunk);
    pos += chunk.length;
  }
  return lines;
}

/** The file from its start, in chunks of one reused buffer: each chunk is valid until the next. An abort (a cancel, a shutdown) stops it: the temp file is then removed and the lock released. */
async function* chunks(fh: FileHandle, chunkBytes: number, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(chunkBytes);
  for (let pos = 0; ;) {
    if (signal?.aborted) throw cancelled();
    const { bytesRead } = await fh.read(buf, 0, chunkBytes, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

/** Gathers small pieces into chunk-sized writes. */
class ChunkWriter {
  bytes = 0;
  private readonly buf: Buffer;
  private used = 0;

  constructor(
    private readonly fh: FileHandle,
    size: number,
  ) {
    this.buf = Buffer.allocUnsafe(size);
  }

  async write(p: Buffer): Promise<void> {
    this.bytes += p.length;
    if (this.used + p.length > this.buf.length) await this.flush();
    if (p.length >= this.buf.length) return writeAll(this.fh, p);
    p.copy(this.buf, this.used);
    this.used += p.length;
  }

  async flush(): Promise<void> {
    if (this.used) await writeAll(this.fh, this.buf.subarray(0, this.used));
    this.used = 0;
  }
}

async function writeAll(fh: FileHandle, b: Buffer): Promise<void> {
  for (let off = 0; off < b.length;) off += (await fh.write(b, off, b.length - off)).bytesWritten;
}
