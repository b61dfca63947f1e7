// Where latch keeps its own state: the ledger database, mutation locks and default policy logs.
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { Refusal, ToolError, errnoCode } from "../errors.js";
import { realpathOf } from "./realpath.js";

export { defaultStateDir } from "./state-path.js";

export interface StateDir {
  dir: string;
  locks: string;
  db: string;
  /** Throws ESTATE when the state dir is no longer the one opened (deleted, or replaced by another). */
  verify(): void;
}

/**
 * Create (mode 0700) and canonicalise the state dir, so the control-plane check can compare real paths.
 * Every fault (a dangling link, a file where a folder belongs, a folder where latch.db belongs, no
 * write permission, a full or read-only disk) is an ESTATE/ENOSPC ToolError naming the path and the fix.
 */
export function openStateDir(dir: string): StateDir {
  const link = lstatSync(dir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink() && !existsSync(dir)) {
    throw new ToolError(
      "ESTATE",
      `The state dir \`${dir}\` is a symbolic link to \`${readlinkSync(dir)}\`, which does not exist. Create that folder, or start latch with another --state-dir.`,
    );
  }
  let real: string;
  try {
    const held = statSync(path.join(dir, "locks"), { throwIfNoEntry: false });
    if (held && !held.isDirectory())
      throw stateFault(errno("ENOTDIR"), path.join(dir, "locks"), dir, "use the lock folder");
    mkdirSync(path.join(dir, "locks"), { recursive: true, mode: 0o700 });
    real = realpathOf(dir);
    ownerOnly(real, 0o700);
  } catch (err) {
    throw stateFault(whyNotMade(err, dir), dir, dir, "create its folders");
  }
  const locks = path.join(real, "locks");
  const db = path.join(real, "latch.db");
  if (statSync(db, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ToolError(
      "ESTATE",
      `The read ledger \`${db}\` is a folder, not a database. Move it out of the way; latch makes a new one.`,
    );
  }
  try {
    // The ledger (and the approval queue in it) is for this user alone: 0600, and SQLite gives its
    // -wal and -shm files the database's own mode.
    closeSync(openSync(db, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
    ownerOnly(db, 0o600);
    accessSync(real, constants.W_OK | constants.X_OK);
    accessSync(locks, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw stateFault(err, real, real, "write");
  }
  const id = statSync(real);
  return {
    dir: real,
    locks,
    db,
    verify() {
      const now = statSync(real, { throwIfNoEntry: false });
      if (now?.ino === id.ino && now.dev === id.dev) return;
      throw new ToolError(
        "ESTATE",
        now
          ? `The state dir \`${real}\` was replaced since latch started (its read ledger and default policy log went with the old one); nothing ran. Restart latch.`
          : `The state dir \`${real}\` was deleted while latch runs; nothing ran, and nothing is logged until it is back. Move it back, or restart latch.`,
      );
    },
  };
}

/** Narrow a file or folder of ours to its owner (a state dir made earlier, or by another tool, may be wider). */
function ownerOnly(p: string, mode: number): void {
  const st = statSync(p);
  if ((st.mode & 0o777) !== mode && st.uid === process.getuid?.()) chmodSync(p, mode);
}

/**
 * A recursive mkdir says ENOENT when a missing parent cannot be made (a read-only or foreign HOME
 * under the default state dir): the nearest parent that exists tells why, so the message is not "gone".
 */
function whyNotMade(err: unknown, dir: string): unknown {
  if (errnoCode(err) !== "ENOENT") return err;
  let parent = path.dirname(path.resolve(dir));
  while (!existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
  try {
    accessSync(parent, constants.W_OK | constants.X_OK);
  } catch (why) {
    return why;
  }
  return err;
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

/**
 * A file-system fault at `where` (in the state dir `stateDir`) as a ToolError naming the path and the
 * fix; `doing` says what latch was at ("take the write lock"). Anything else is returned as it is.
 */
export function stateFault(err: unknown, where: string, stateDir: string, doing: string): unknown {
  if (err instanceof ToolError || err instanceof Refusal) return err;
  const code = errnoCode(err);
  const at = `latch could not ${doing} in \`${where}\``;
  switch (code) {
    case "ENOSPC":
    case "EDQUOT":
      return new ToolError(
        "ENOSPC",
        `The state dir \`${stateDir}\` is full: ${at}. Free space on that disk (or start latch with another --state-dir), then retry.`,
      );
    case "ENOENT":
      return new ToolError(
        "ESTATE",
        `The state dir \`${stateDir}\` is gone (deleted or unmounted): ${at}. Restore it, or restart latch with another --state-dir.`,
      );
    case "ENOTDIR":
    case "EEXIST":
      return new ToolError(
        "ESTATE",
        `${at}: a file stands where latch keeps a folder. Move \`${where}\` out of the way; latch makes the folder again.`,
      );
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ToolError(
        "ESTATE",
        `${at} (${code}): the state dir \`${stateDir}\` is not writable. Make it writable by this user (chmod u+rwx), or start latch with another --state-dir.`,
      );
    case "EIO":
    case "ELOOP":
      return new ToolError("ESTATE", `${at} (${code}). Check the disk and the state dir \`${stateDir}\`.`);
    default:
      return err;
  }
}
