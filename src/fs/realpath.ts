// The canonical path of a path that exists, for every caller in src/ (eslint keeps Node's own out).
// On Linux the kernel's lookup: open with O_PATH (nothing is opened for reading: no FIFO blocks, no
// device wakes) and read the descriptor's link in /proc/self/fd, one walk with the kernel's limit of
// 40 links. glibc's realpath(3) walks in user space and reads each link's target again from its
// start: 38 links with absolute targets 1,900 folders deep took it 4.4 s per call, a path a model's
// shell can make and every walk of the workspace meets (3.4 ms this way); Node's JS realpathSync
// loops forever on `f -> q/f`, `q -> sub/..`. realpath(3) where /proc is not mounted (macOS too),
// and for a file deleted between the open and the read (its link then ends " (deleted)").
import { closeSync, existsSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { fromOsPath, hasEscapedBytes, osPath } from "./names.js";

/** Linux's O_PATH (not in Node's constants): a descriptor for the lookup alone (libuv adds O_CLOEXEC). */
const O_PATH = 0o10000000;
/** Whether the kernel names a descriptor's file; fixed for the process. */
const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

/**
 * What realpath(3) gives for `p`, and its errors (ENOENT, ENOTDIR, ELOOP, EACCES). A name that is
 * not valid UTF-8, in `p` or met through a link, is held as names.ts holds it.
 */
export function realpathOf(p: string): string {
  if (PROC_FD) {
    const fd = openSync(osPath(p), O_PATH);
    let real: string;
    try {
      real = readlinkSync(`/proc/self/fd/${fd}`);
      if (real.includes("\uFFFD")) real = fromOsPath(readlinkSync(`/proc/self/fd/${fd}`, { encoding: "buffer" }));
    } finally {
      closeSync(fd);
    }
    if (real.startsWith("/") && !real.endsWith(" (deleted)")) return real;
  }
  return realpathByName(p);
}

/** realpath(3): the string form is the fast one; a name that is not valid UTF-8 is redone in bytes. */
function realpathByName(p: string): string {
  if (!hasEscapedBytes(p)) {
    const real = realpathSync.native(p);
    if (!real.includes("\uFFFD")) return real;
  }
  return fromOsPath(realpathSync.native(osPath(p), { encoding: "buffer" }));
}
