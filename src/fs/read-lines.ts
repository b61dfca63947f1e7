// Streaming reads of a line window. Memory stays flat in the file size: the file is read in fixed
// chunks, only the requested lines are kept (up to the output budget), and the whole file is hashed
// on the way so the read can be recorded for read-before-write.
// The reads are synchronous, a chunk at a time, yielding to the event loop between chunks: a small
// file costs one read(2) instead of five thread-pool trips (see src/fs/paths.ts).
import { createHash } from "node:crypto";
import { closeSync, fstatSync, readSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { Refusal, ToolError, cancelled, errnoCode } from "../errors.js";
import { LOCAL_FILES, type FileBackend } from "./backend.js";
import type { ResolvedPath } from "./paths.js";
import { countNewlines, looksBinary, SNIFF_BYTES } from "./text.js";
import { hardLinkRefusal, openFileBeneath } from "./beneath.js";

const CHUNK = 1 << 20;
/** The read buffer for a small file: its size and one byte more (to see the end), at least this. */
const MIN_CHUNK = 16 << 10;

export interface LineWindow {
  /** The exact bytes of the lines shown, line endings included, decoded as UTF-8. */
  content: string;
  startLine: number;
  /** The last line shown; startLine - 1 when none. */
  endLine: number;
  totalLines: number;
  bytes: number;
  sha256: string;
  /** Set when the output budget cut the window short: the line to continue from. */
  nextStartLine?: number;
  /** Set when one line alone was longer than the budget and was cut. */
  cutLine?: number;
}

export interface WindowRequest {
  start: number;
  end?: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** A refusal for a file of this size (read_file's limit), checked on the opened file before a byte is read. */
  refuseSize?: (size: number) => Error | undefined;
}

/** An open descriptor of a file to read, and its size when opened: through the walk (beneath.ts), never through a link. */
function openForRead(target: ResolvedPath): { fd: number; size: number } {
  let fd: number | null;
  try {
    fd = openFileBeneath(target);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOTDIR")
      throw new ToolError(
        "ENOTDIR",
        `\`${target.rel}\` passes through something that is not a folder. Check the path with list_dir.`,
      );
    if (code === "EACCES") throw new ToolError("EACCES", `Permission denied reading \`${target.rel}\`.`);
    if (code === "ELOOP")
      throw new Refusal(
        `\`${target.rel}\` is a symbolic link now; latch does not read through links.`,
        "Read the file it points to instead.",
      );
    throw err;
  }
  if (fd === null)
    throw new ToolError("ENOENT", `\`${target.rel}\` does not exist. Check the name with find_files or list_dir.`);
  try {
    const st = fstatSync(fd);
    if (st.isDirectory())
      throw new ToolError("EISDIR", `\`${target.rel}\` is a folder, not a file. List it with list_dir.`);
    if (!st.isFile())
      throw new ToolError(
        "EISDIR",
        `\`${target.rel}\` is not a regular file (a pipe, socket or device); latch reads regular files only.`,
      );
    if (st.nlink > 1) throw hardLinkRefusal(target.rel, st.nlink);
    return { fd, size: st.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function refuseBinary(target: ResolvedPath): Refusal {
  return new Refusal(
    `\`${target.rel}\` is a binary file; latch reads text files only.`,
    "Use stat_file to see its size and type.",
  );
}

/** The window, read from this disk in chunks, or (client shape) from the whole text the client holds. */
export async function readLineWindow(
  target: ResolvedPath,
  req: WindowRequest,
  files: FileBackend = LOCAL_FILES,
): Promise<LineWindow> {
  if (files.kind !== "local") {
    const bytes = await files.read(target, req.signal ?? new AbortController().signal);
    if (bytes === null)
      throw new ToolError("ENOENT", `\`${target.rel}\` does not exist. Check the name with find_files or list_dir.`);
    let given = false;
    return scan(() => (given ? null : ((given = true), bytes.length ? bytes : null)), target, req);
  }
  const { fd, size } = openForRead(target);
  try {
    const refusal = req.refuseSize?.(size);
    if (refusal) throw refusal;
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(MIN_CHUNK, size + 1)));
    // A short read that reaches fstat's size is the file's end: a file read whole takes one read(2),
    // not a second that returns 0 (verify's stat sees a later growth). Not for size 0: procfs and
    // sysfs files say 0 and are read, a page at a time, to the read that returns nothing.
    let total = 0;
    let ended = false;
    return await scan(
      () => {
        if (ended) return null;
        const n = readSync(fd, buf, 0, buf.length, null);
        total += n;
        ended = size > 0 && n < buf.length && total >= size;
        return n === 0 ? null : buf.subarray(0, n);
      },
      target,
      req,
    );
  } finally {
    closeSync(fd);
  }
}

/** `next` gives the file's bytes a chunk at a time (null at the end); a chunk is valid until the next call. */
async function scan(next: () => Buffer | null, target: ResolvedPath, req: WindowRequest): Promise<LineWindow> {
  const hash = createHash("sha256");
  const kept = new KeptBytes();
  let line = 1; // the line the cursor is in
  let bytes = 0;
  let lastByte = -1;
  let full = false; // the budget is spent: keep counting, stop keeping
  let endLine = req.start - 1;
  let nextStartLine: number | undefined;
  let cutLine: number | undefined;
  const inWindow = (n: number) => n >= req.start && (req.end === undefined || n <= req.end);

  // Where the line being kept began, so a line that overflows the budget is dropped whole.
  let lineStartBytes = 0;
  const keep = (chunk: Buffer, from: number, to: number, n: number, endsLine: boolean) => {
    if (full) return;
    const room = req.maxOutputBytes - kept.bytes;
    if (to - from <= room) {
      kept.add(chunk, from, to);
      if (endsLine) {
        endLine = n;
        lineStartBytes = kept.bytes;
      }
      return;
    }
    full = true;
    if (n === req.start) {
      // One line longer than the whole budget: show its head rather than nothing.
      kept.add(chunk, from, from + room);
      endLine = n;
      cutLine = n;
      nextStartLine = n + 1;
    } else {
      kept.truncate(lineStartBytes);
      nextStartLine = endLine + 1;
    }
  };

  for (let first = true; ; first = false) {
    if (req.signal?.aborted) throw cancelled();
    const chunk = next();
    if (chunk === null) break;
    if (!first) {
      // A large file: other calls and the abort signal come in between its chunks. Only between:
      // a file read whole in one chunk ends without waiting for a turn of the event loop.
      await nextTurn();
      if (req.signal?.aborted) throw cancelled();
    }
    const bytesRead = chunk.length;
    if (bytes === 0 && looksBinary(chunk.subarray(0, SNIFF_BYTES))) throw refuseBinary(target);
    hash.update(chunk);
    bytes += bytesRead;
    lastByte = chunk[bytesRead - 1];
    let from = 0;
    while (from < bytesRead) {
      if (full || (req.end !== undefined && line > req.end)) {
        line += countNewlines(chunk, from); // nothing more is kept: the rest only counts
        break;
      }
      if (req.end === undefined && line >= req.start && bytesRead - from <= req.maxOutputBytes - kept.bytes) {
        // The rest of the chunk is in the window and fits: kept at once, its lines counted (a window
        // that is the whole file, nearly every read, takes no per-line steps).
        const n = countNewlines(chunk, from);
        kept.add(chunk, from, bytesRead);
        if (n > 0) {
          endLine = line + n - 1;
          lineStartBytes = kept.bytes - (bytesRead - 1 - chunk.lastIndexOf(10));
          line += n;
        }
        break;
      }
      const nl = chunk.indexOf(10, from);
      const stop = nl === -1 ? bytesRead : nl + 1;
      if (inWindow(line)) keep(chunk, from, stop, line, nl !== -1);
      if (nl === -1) break;
      line++;
      from = stop;
    }
    kept.flush(); // the next read reuses buf
  }
  // A last line without a newline still counts (and is shown) as a line.
  const totalLines = bytes === 0 ? 0 : lastByte === 10 ? line - 1 : line;
  if (!full && lastByte !== 10 && bytes > 0 && inWindow(totalLines) && endLine < totalLines) endLine = totalLines;
  if (nextStartLine !== undefined && nextStartLine > totalLines) nextStartLine = undefined;
  return {
    content: kept.text(),
    startLine: req.start,
    endLine: Math.min(endLine, totalLines),
    totalLines,
    bytes,
    sha256: hash.digest("hex"),
    nextStartLine,
    cutLine,
  };
}

/** The kept window's bytes: runs of one chunk are copied once per chunk, not once per line. */
class KeptBytes {
  private readonly parts: Buffer[] = [];
  private copied = 0;
  private chunk: Buffer | undefined;
  private from = 0;
  private to = 0;

  get bytes(): number {
    return this.copied + (this.to - this.from);
  }

  /** Keep chunk[from, to); `chunk` is only valid until the next flush. */
  add(chunk: Buffer, from: number, to: number): void {
    if (chunk === this.chunk && from === this.to) {
      this.to = to;
      return;
    }
    this.flush();
    this.chunk = chunk;
    this.from = from;
    this.to = to;
  }

  flush(): void {
    if (this.chunk && this.to > this.from) {
      this.parts.push(Buffer.from(this.chunk.subarray(this.from, this.to)));
      this.copied += this.to - this.from;
    }
    this.chunk = undefined;
    this.from = this.to = 0;
  }

  /** Drop everything after the first n bytes. */
  truncate(n: number): void {
    this.flush();
    while (this.copied > n) {
      const last = this.parts.pop() as Buffer;
      this.copied -= last.length;
      if (this.copied < n) {
        this.parts.push(last.subarray(0, n - this.copied));
        this.copied = n;
      }
    }
  }

  text(): string {
    this.flush();
    // One part (a file read in one chunk) is decoded as it is, not copied once more by concat.
    return (this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)).toString("utf8");
  }
}
