// Where rg's stderr goes: an unlinked temp file, read once rg has exited, for the error it may
// explain. (Chosen when rg wrote a `--debug` log, ~25,000 unbuffered writes a search, each waking a
// pipe's reader; rg runs without it now, steady-tree.ts.) The file is 0600, created exclusively and
// unlinked at once, so nothing else can open it by name; it goes when its descriptor is closed.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readSync, unlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

export interface RgLog {
  /** The descriptor to give rg as its stderr (`stdio[2]`). */
  fd: number;
  /** Feed what rg wrote, in order, as UTF-8 text; call once rg has exited. */
  drain(push: (text: string) => void): void;
  close(): void;
}

function openRgLog(): RgLog {
  const file = path.join(os.tmpdir(), `latch-rg-${process.pid}-${randomUUID()}.log`);
  const fd = openSync(file, "wx+", 0o600);
  unlinkSync(file);
  return {
    fd,
    drain(push) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      const decoder = new StringDecoder("utf8");
      let at = 0;
      let n: number;
      while ((n = readSync(fd, buf, 0, buf.length, at)) > 0) {
        push(decoder.write(buf.subarray(0, n)));
        at += n;
      }
      push(decoder.end());
    },
    close() {
      closeSync(fd);
    },
  };
}

/** rg spawned with argv (never a shell) in `cwd`, its stdout a pipe and its stderr an RgLog. */
export function spawnRg(
  rgPath: string,
  args: string[],
  cwd: string,
): { child: ChildProcess; stdout: Readable; log: RgLog } {
  const log = openRgLog();
  try {
    const child = spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", log.fd], shell: false });
    return { child, stdout: child.stdout!, log };
  } catch (err) {
    log.close();
    throw err;
  }
}
