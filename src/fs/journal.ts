// The journal of half-done steps, in latch.db beside the read ledger: each step that a kill could leave
// half done is written here first and cleared when it is done. A read marker reserved before a rename,
// a move's second link (link, then unlink), the folders a write made for its file. At start (the
// ledger opens) and before each write call, the steps of processes that are gone, and the steps this
// process gave up on, are finished or undone from what the disk holds now:
// - a reserved marker: the file holds the reserved content (the write landed) → it is the session's
//   read; it does not → the marker goes, so the next call is not told its own write changed the file;
// - a move: both paths are links of the moved file → the old one is removed (the move is finished);
// - made folders: removed again while empty (after the dead writer's temp files in them).
// Recovery runs without the paths' locks: what it removes is a second link of a file already at its
// new path, an empty folder, or a dead writer's temp file, all of which no live writer needs.
import type Database from "better-sqlite3";
import { constants, closeSync, fstatSync, openSync, readSync, rmdirSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { errnoCode } from "../errors.js";
import { removeDeadTemps } from "./atomic-write.js";
import { lstatBeneath, openFolder, openParent, rootOf, type Folder } from "./beneath.js";
import { ownerAlive } from "./lock.js";
import { removeIfStill } from "./same-file.js";
import { osPath } from "./names.js";
import { PLACE, STARTED } from "./owner.js";

/** How long a landed write is remembered for its retries (as long as a read marker counts). */
const APPLIED_TTL_MS = 24 * 60 * 60 * 1000;

/** What a write was, for telling its retry: the sha256 it started from and its call's key. */
export interface WriteOf {
  before: string | null;
  call?: string;
}

/** This process, as journal rows name their owner (lock.ts's owner line without its random part). */
const OWNER = `${PLACE} ${process.pid} ${STARTED}`;
/** The owner of a step its process gave up on: the next call (of any process) finishes it. */
const ABANDONED = "";

/** A path inside a root, as the walk (beneath.ts) takes it. */
export interface Place {
  abs: string;
  rel: string;
}

export interface MoveStep {
  from: Place;
  to: Place;
  /** The moved file: only a link of this file is ever removed. */
  dev: number;
  ino: number;
}

interface Row {
  id: number;
  owner: string;
  kind: "marker" | "move" | "folders" | "applied";
  session: string | null;
  key: string | null;
  sha: string | null;
  data: string;
}

export interface Recovered {
  markers: number;
  moves: number;
  folders: number;
}

export class Journal {
  private readonly add: Database.Statement;
  private readonly clearOne: Database.Statement;
  private readonly clearMarker: Database.Statement;
  private readonly forgetApplied: Database.Statement;
  private readonly keepApplied: Database.Statement;
  private readonly lookupApplied: Database.Statement;
  private readonly abandonOne: Database.Statement;
  private readonly others: Database.Statement;
  private readonly keepOnly: Database.Statement;
  private readonly dropOne: Database.Statement;
  private readonly asApplied: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    /** Run before recovery reads or changes the reads table: the ledger's reads that wait are written first. */
    private readonly beforeRecover: () => void = () => undefined,
    /** Where a move's old name is judged and removed (removeIfStill): the state dir's trash. */
    private readonly trash?: string,
  ) {
    this.add = db.prepare(
      "INSERT INTO journal (owner, kind, session, key, sha, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.clearOne = db.prepare("DELETE FROM journal WHERE id = ?");
    this.clearMarker = db.prepare(
      "DELETE FROM journal WHERE kind = 'marker' AND session = ? AND key = ? AND sha = ? AND owner = ?",
    );
    // A landed write's marker row stays as the session's last write of the file (kind 'applied', no owner).
    this.forgetApplied = db.prepare("DELETE FROM journal WHERE kind = 'applied' AND session = ? AND key = ?");
    this.keepApplied = db.prepare(
      `UPDATE journal SET kind = 'applied', owner = '${ABANDONED}' WHERE kind = 'marker' AND session = ? AND key = ? AND sha = ? AND owner = ?`,
    );
    this.lookupApplied = db.prepare(
      "SELECT data FROM journal WHERE kind = 'applied' AND session = ? AND key = ? AND sha = ? AND at >= ?",
    );
    this.abandonOne = db.prepare(`UPDATE journal SET owner = '${ABANDONED}' WHERE id = ?`);
    this.others = db.prepare("SELECT * FROM journal WHERE owner <> ? AND kind <> 'applied' ORDER BY id");
    db.prepare("DELETE FROM journal WHERE kind = 'applied' AND at < ?").run(Date.now() - APPLIED_TTL_MS);
    this.keepOnly = db.prepare("DELETE FROM reads WHERE session = ? AND path = ? AND sha256 <> ?");
    this.dropOne = db.prepare("DELETE FROM reads WHERE session = ? AND path = ? AND sha256 = ?");
    this.asApplied = db.prepare(`UPDATE journal SET kind = 'applied', owner = '${ABANDONED}' WHERE id = ?`);
  }

  /**
   * A reserved marker (the ledger's key of the path, and the path itself to hash at recovery), with
   * what the write was: the sha256 it started from and its call's key, kept once it lands.
   */
  marker(session: string, key: string, file: string, sha: string, write?: WriteOf): void {
    const data = JSON.stringify({ file, before: write?.before ?? null, call: write?.call ?? null });
    this.add.run(OWNER, "marker", session, key, sha, data, Date.now());
  }

  /** The reserved marker's write landed (it becomes the session's last write of the file) or did not (it goes). */
  markerDone(session: string, key: string, sha: string, landed: boolean): void {
    if (landed) {
      this.forgetApplied.run(session, key);
      this.keepApplied.run(session, key, sha, OWNER);
    } else this.clearMarker.run(session, key, sha, OWNER);
  }

  /** Whether the session's last write of the file was this call (`call`) from `before`, and produced `after`. */
  applied(session: string, key: string, before: string, after: string, call: string): boolean {
    const rows = this.lookupApplied.all(session, key, after, Date.now() - APPLIED_TTL_MS) as { data: string }[];
    return rows.some((r) => {
      const d = JSON.parse(r.data) as { before?: string | null; call?: string | null };
      return d.before === before && d.call === call;
    });
  }

  /** A move about to link `to`; returns the step's id, cleared when the old link is gone (or the new one undone). */
  move(step: MoveStep): number {
    return Number(this.add.run(OWNER, "move", null, null, null, JSON.stringify(step), Date.now()).lastInsertRowid);
  }

  /** Folders about to be made for `target`: those under `keep` (which exists) on its path. */
  folders(target: Place, keep: string): number {
    const data = JSON.stringify({ target: { abs: target.abs, rel: target.rel }, keep });
    return Number(this.add.run(OWNER, "folders", null, null, null, data, Date.now()).lastInsertRowid);
  }

  /** The step is done (or undone); a journal that cannot be updated leaves it for recovery, which finds it done. */
  done(id: number): void {
    try {
      this.clearOne.run(id);
    } catch {
      // recovery finds the step finished and clears it then
    }
  }

  /** This process could not finish or undo the step: the next call finishes it. */
  abandon(id: number): void {
    try {
      this.abandonOne.run(id);
    } catch {
      // left under this process's name: the next start after it ends finishes it
    }
  }

  /**
   * Finish or undo the steps of processes that are gone and the abandoned ones. A step that still
   * cannot be finished (a fault that lasts) stays for the next call. Never throws: a journal that
   * cannot be read leaves the steps where they are.
   */
  recover(): Recovered {
    this.beforeRecover();
    const out: Recovered = { markers: 0, moves: 0, folders: 0 };
    let rows: Row[];
    try {
      rows = this.others.all(OWNER) as Row[];
    } catch {
      return out;
    }
    for (const row of rows) {
      if (row.owner !== ABANDONED && ownerAlive(row.owner) !== false) continue;
      try {
        const finished = this.resolve(row);
        if (!finished) continue;
        this.clearOne.run(row.id);
        out[row.kind === "marker" ? "markers" : row.kind === "move" ? "moves" : "folders"]++;
      } catch {
        // the disk or the database still refuses: the step stays for the next call
      }
    }
    return out;
  }

  /** One step, from what the disk holds now; false when it must stay for later. */
  private resolve(row: Row): boolean {
    const data = JSON.parse(row.data) as Record<string, unknown>;
    if (row.kind === "marker") {
      const landed = sha256Of(String(data.file)) === row.sha;
      if (landed) {
        this.keepOnly.run(row.session, row.key, row.sha);
        this.forgetApplied.run(row.session, row.key);
        this.asApplied.run(row.id);
        return false; // kept, as the session's last write
      }
      this.dropOne.run(row.session, row.key, row.sha);
      return true;
    }
    if (row.kind === "move") return finishMove(data as unknown as MoveStep, this.trash);
    const { target, keep } = data as { target: Place; keep: string };
    removeEmptyFolders(target, keep);
    return true;
  }
}

/**
 * A move cut between its link and its unlink: both paths are the file; the old one goes. Cut after
 * the old name was renamed aside (removeIfStill), the file's second link is that dead writer's temp
 * name: the temp files of dead writers in the old folder go first.
 */
function finishMove(step: MoveStep, trash?: string): boolean {
  const from = openParentQuietly(step.from);
  if (from !== undefined)
    try {
      removeDeadTemps(from);
    } finally {
      from.close();
    }
  const same = (p: Place) => {
    const st = lstatBeneath(p, "moving");
    return st !== undefined && st.dev === step.dev && st.ino === step.ino;
  };
  if (!same(step.from) || !same(step.to)) return true; // done, or never linked: nothing to finish
  const { dir, name } = openParent(step.from, { doing: "moving" });
  try {
    // Not by name after the look: the old name goes only while it still holds the moved file (review
    // g67 left a move half done, then swapped another file in between this check and an unlink).
    if (removeIfStill(dir, name, { dev: step.dev, ino: step.ino }, trash).done === "removed") dir.sync();
  } finally {
    dir.close();
  }
  return true;
}

/** The folder of `p`, opened by the walk, or undefined where it is gone or changed. */
function openParentQuietly(p: Place): Folder | undefined {
  try {
    return openParent(p, { doing: "moving" }).dir;
  } catch {
    return undefined;
  }
}

/** The folders on `target`'s path below `keep` (root-relative), deepest first, removed while empty. */
export function removeEmptyFolders(target: Place, keep: string): void {
  const root = rootOf(target);
  for (let rel = path.posix.dirname(target.rel); rel !== keep && rel !== "." && rel !== "";) {
    try {
      const self = openFolder(root, rel, { doing: "writing" });
      try {
        removeDeadTemps(self);
      } finally {
        self.close();
      }
      const { dir, name } = openParent({ abs: path.join(root, rel), rel }, { doing: "writing" });
      try {
        rmdirSync(dir.at(name));
      } finally {
        dir.close();
      }
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") return; // not empty (or changed): it stays, and so do its parents
    }
    rel = path.posix.dirname(rel);
  }
}

/** sha256 of a regular file's bytes, never through a link; null when there is none. */
function sha256Of(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(osPath(file), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (["ENOENT", "ELOOP", "ENOTDIR"].includes(errnoCode(err) ?? "")) return null;
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 16);
    for (let n; (n = readSync(fd, buf)) > 0;) hash.update(buf.subarray(0, n));
    return hash.digest("hex");
  } finally {
    closeSync(fd);
  }
}
