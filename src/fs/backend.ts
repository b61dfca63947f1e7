// Where the content tools' files live. In the workspace shape, this machine's disk; in the client
// shape, the editor connected over ACP (src/transports/acp), whose buffers may hold unsaved text and
// which shows every change. Everything above a backend is one path: the resolver, read-before-write
// (hashed over the bytes the backend returned), envelopes, approvals with exact diffs, the log.
import { writeAtomic, type Written } from "./atomic-write.js";
import type { ReadPin } from "./same-file.js";
import { readCurrentBytes, readCurrentPinned } from "./current.js";
import type { ResolvedPath } from "./paths.js";

export interface FileBackend {
  /** `local`: node's fs, with locks, atomic renames and streamed reads; `client`: whole texts over ACP. */
  readonly kind: "local" | "client";
  /** The file's current bytes, or null when it does not exist. */
  read(target: ResolvedPath, signal: AbortSignal): Promise<Buffer | null>;
  /**
   * `read`, pinned for a write based on it: given to `write`, the pin makes it land on the file that
   * was read, or refuses it as stale (ReadPin). A local-disk notion (folders and inodes), so optional:
   * a backend without it writes by name. The caller closes the pin once the write is done.
   */
  readPinned?(target: ResolvedPath, signal: AbortSignal): Promise<{ bytes: Buffer | null; pin: ReadPin }>;
  /**
   * Replace the file's content; a failure throws and leaves the old content (the backend's promise).
   * `beforeCommit` runs last before the content is committed (the rename, the client's write) and may
   * throw to abandon the write: mutate() reserves the ledger marker there. `afterCommit`, where a
   * backend takes it, runs right after the commit while what remains of the write (the folder's
   * fsync) goes on, and must not throw; mutate() settles the marker there, or after the write.
   */
  write(
    target: ResolvedPath,
    bytes: Buffer,
    signal: AbortSignal,
    beforeCommit?: () => void | Promise<void>,
    afterCommit?: () => void,
    pin?: ReadPin,
  ): Promise<Written>;
}

export const LOCAL_FILES: FileBackend = {
  kind: "local",
  read: (target) => readCurrentBytes(target),
  readPinned: (target) => readCurrentPinned(target),
  write: (target, bytes, _signal, beforeCommit, afterCommit, pin) =>
    writeAtomic(target, bytes, beforeCommit, afterCommit, pin),
};
