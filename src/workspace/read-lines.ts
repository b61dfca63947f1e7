// Streaming reads of a line window. Memory stays flat in the file size: the file is read in fixed
// chunks, only the requested lines are kept (up to the output budget), and the whole file is hashed
// on the way so the read can be recorded for read-before-write.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import type { ResolvedPath } from "./paths.js";
import { looksBinary, SNIFF_BYTES } from "./text.js";

const CHUNK = 1 << 20;

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
}

export async function openForRead(target: ResolvedPath): Promise<FileHandle> {
  try {
    const fh = await open(target.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    const st = await fh.stat();
    if (st.isDirectory()) {
      await fh.close();
      throw new ToolError("EISDIR", `\`${target.rel}\` is a folder, not a file. List it with list_dir.`);
    }
    return fh;
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT") throw new ToolError("ENOENT", `\`${target.rel}\` does not exist. Check the name with find_files or list_dir.`);
    if (code === "EACCES") throw new ToolError("EACCES", `Permission denied reading \`${target.rel}\`.`);
    throw err;
  }
}

export function refuseBinary(target: ResolvedPath): Refusal {
  return new Refusal(`\`${target.rel}\` is a binary file; latch reads text files only.`, "Use stat_file to see its size and type.");
}

export async function readLineWindow(target: ResolvedPath, req: WindowRequest): Promise<LineWindow> {
  const fh = await openForRead(target);
  try {
    return await scan(fh, target, req);
  } finally {
    await fh.close();
  }
}

async function scan(fh: FileHandle, target: ResolvedPath, req: WindowRequest): Promise<LineWindow> {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(CHUNK);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 1; // the line the cursor is in
  let bytes = 0;
  let lastByte = -1;
  let full = false; // the budget is spent: keep counting, stop keeping
  let endLine = req.start - 1;
  let nextStartLine: number | undefined;
  let cutLine: number | undefined;
  const inWindow = (n: number) => n >= req.start && (req.end === undefined || n <= req.end);

  // Where the line being kept began in `kept`, so a line that overflows the budget is dropped whole.
  let lineStartIdx = 0;
  let lineStartBytes = 0;
  const keep = (piece: Buffer, n: number, endsLine: boolean) => {
    if (full) return;
    const room = req.maxOutputBytes - keptBytes;
    if (piece.length <= room) {
      kept.push(Buffer.from(piece));
      keptBytes += piece.length;
      if (endsLine) {
        endLine = n;
        lineStartIdx = kept.length;
        lineStartBytes = keptBytes;
      }
      return;
    }
    full = true;
    if (n === req.start) {
      // One line longer than the whole budget: show its head rather than nothing.
      kept.push(Buffer.from(piece.subarray(0, room)));
      keptBytes += room;
      endLine = n;
      cutLine = n;
      nextStartLine = n + 1;
    } else {
      kept.length = lineStartIdx;
      keptBytes = lineStartBytes;
      nextStartLine = endLine + 1;
    }
  };

  for (;;) {
    if (req.signal?.aborted) throw new ToolError("ECANCELED", "The read was cancelled.");
    const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    if (bytes === 0 && looksBinary(chunk.subarray(0, SNIFF_BYTES))) throw refuseBinary(target);
    hash.update(chunk);
    bytes += bytesRead;
    lastByte = chunk[bytesRead - 1];
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      const stop = nl === -1 ? bytesRead : nl + 1;
      if (inWindow(line)) keep(chunk.subarray(from, stop), line, nl !== -1);
      if (nl === -1) break;
      line++;
      from = stop;
      if (from >= bytesRead) break;
    }
  }
  // A last line without a newline still counts (and is shown) as a line.
  const totalLines = bytes === 0 ? 0 : lastByte === 10 ? line - 1 : line;
  if (!full && lastByte !== 10 && bytes > 0 && inWindow(totalLines) && endLine < totalLines) endLine = totalLines;
  if (nextStartLine !== undefined && nextStartLine > totalLines) nextStartLine = undefined;
  return {
    content: Buffer.concat(kept).toString("utf8"),
    startLine: req.start,
    endLine: Math.min(endLine, totalLines),
    totalLines,
    bytes,
    sha256: hash.digest("hex"),
    nextStartLine,
    cutLine,
  };
}
