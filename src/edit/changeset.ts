// Several files changed all or nothing (apply_patch; delete_file uses it for one file).
// Under the locks of every target (taken in sorted order, so two changesets cannot deadlock): read
// every current content, compute every new one, check every read-before-write and every folder, and
// only then write: new contents are staged as synced temp files beside their targets (several at
// once), renamed over them in order, and the deletions follow. Each read is pinned (ReadPin): the
// staging, rename and removal happen in the folder it went through, on the file it read, or not at all. A failure before the first rename
// leaves every file as it was. An error during the renames (a full disk cannot strike there; a vanished folder or a failing disk can) is undone
// from the old bytes kept in memory, and the error names any file that could not be put back.
// Folders made for new files are journaled first and removed again when the change fails.
// A crash (power loss, SIGKILL) between two renames cannot be undone: the files renamed so far hold
// their new content, the others their old one, each file whole (never torn). The next start (or
// write call) removes the folders made for files that did not land, and the dead writer's temp files
// in them (fs/journal.ts); other temp files stay as `.NAME.latch-PID-….tmp` until the next start, or a
// later write into their folder (a process's first there, or one 5 s after its last sweep), removes them.
import { fstatSync } from "node:fs";
import { unlink } from "node:fs/promises";
import path from "node:path";
import { stageAtomic, syncRenamed, type Staged } from "../fs/atomic-write.js";
import { assertPinHolds, changedSinceRead, holds, removeIfStill, type ReadPin } from "../fs/same-file.js";
import { readCurrentBytes, readCurrentPinned } from "../fs/current.js";
import { assertFolderPath } from "./fileops.js";
import type { ReadKind } from "../fs/ledger.js";
import { withPathLock } from "../fs/lock.js";
import {
  assertFolderUnchanged,
  baseOf,
  makeParentsJournaled,
  checkBase,
  checkExpected,
  checkReadBeforeWrite,
  keepPreImages,
  reserveMarker,
  settleMarker,
  unreserveMarker,
  writeFailure,
  type MutationContext,
} from "./mutate.js";
import type { ResolvedPath } from "../fs/paths.js";
import { sha256 } from "../fs/text.js";
import { openParent, type Folder } from "../fs/beneath.js";
import { AlreadyApplied, Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import { showName } from "../fs/names.js";

export interface FileChange {
  target: ResolvedPath;
  /** The new content; null removes the file. */
  after: Buffer | null;
  /** What read of an existing file's current content the change needs. */
  needs: ReadKind;
  /** A move: the file whose read marker the target takes over. */
  markerFrom?: ResolvedPath;
  /**
   * The caller checked, under these locks, that the current content is exactly what a recorded write
   * left (undo, src/edit/undo.ts): that hash stands in for the session's read.
   */
  checkedAgainst?: string;
}

export type Currents = Map<string, Buffer | null>;

export interface ChangeOutcome {
  target: ResolvedPath;
  before: Buffer | null;
  after: Buffer | null;
  written: boolean;
}

/** The current bytes of every target (null: missing), read straight from disk. */
export async function readCurrents(targets: ResolvedPath[]): Promise<Currents> {
  const out: Currents = new Map();
  for (const t of targets) if (!out.has(t.abs)) out.set(t.abs, await readCurrentBytes(t));
  return out;
}

/** Each target's read for the write, pinned (ReadPin): the change lands on the files read, in the folders read through. */
type Pins = Map<string, ReadPin>;

/** readCurrents, each pinned; on a failure the pins taken so far are let go. */
async function readPinned(targets: ResolvedPath[], pins: Pins): Promise<Currents> {
  const out: Currents = new Map();
  for (const t of targets) {
    const { bytes, pin } = await readCurrentPinned(t);
    pins.set(t.abs, pin);
    out.set(t.abs, bytes);
  }
  return out;
}

/** Read-before-write for every change, recording nothing; returns the read each existing file had. */
function checkReads(ctx: MutationContext, currents: Currents, changes: FileChange[]): Map<string, ReadKind> {
  const kinds = new Map<string, ReadKind>();
  for (const c of changes) {
    const before = currents.get(c.target.abs) ?? null;
    if (before === null) continue;
    const sha = sha256(before);
    if (c.checkedAgainst !== undefined && c.checkedAgainst === sha) kinds.set(c.target.abs, "full");
    else kinds.set(c.target.abs, checkReadBeforeWrite(ctx, c.target, sha, c.needs));
  }
  return kinds;
}

/** Each target's base (baseOf, taken when the call started): the sha256 it must still hold, null for no file. */
export type Bases = Record<string, string | null>;

export function basesOf(ctx: MutationContext, targets: ResolvedPath[]): Bases {
  return Object.fromEntries(targets.map((t) => [t.abs, baseOf(ctx, t)]));
}

export async function commitChanges(
  ctx: MutationContext,
  targets: ResolvedPath[],
  bases: Bases | undefined,
  compute: (currents: Currents) => FileChange[],
  expected?: Expected,
): Promise<{ outcomes: ChangeOutcome[]; warning?: string }> {
  const sorted = [...new Map(targets.map((t) => [t.abs, t])).values()].sort((a, b) => (a.abs < b.abs ? -1 : 1));
  const pins: Pins = new Map();
  return withLocks(ctx, sorted, async () => {
    for (const t of sorted) await assertFolderUnchanged(ctx, t);
    const currents = await readPinned(sorted, pins);
    if (expected) checkAllExpected(ctx, sorted, currents, expected);
    for (const t of sorted) {
      const cur = currents.get(t.abs) ?? null;
      checkBase(ctx, t, cur === null ? null : sha256(cur), bases?.[t.abs]);
    }
    const changes = compute(currents);
    const kinds = checkReads(ctx, currents, changes);
    for (const c of changes) if (c.after !== null) await assertFolderPath(c.target);
    const outcomes = changes.map((c) => {
      const before = currents.get(c.target.abs) ?? null;
      const same = before !== null && c.after !== null && before.equals(c.after);
      return { target: c.target, before, after: c.after, written: !same };
    });
    // The new contents' markers, reserved before the first rename and settled after the last, as mutate() does for one file.
    const marks = changes.flatMap((c, i) => {
      if (!outcomes[i].written || c.after === null) return [];
      const kind = kinds.get((c.markerFrom ?? c.target).abs) ?? "full";
      const before = outcomes[i].before;
      return [{ target: c.target, sha: sha256(c.after), kind, before: before === null ? null : sha256(before) }];
    });
    const reserved: typeof marks = [];
    let synced: string | undefined;
    try {
      synced = await writeAll(ctx, outcomes, pins, async () => {
        await keepPreImages(ctx, outcomes.filter((o) => o.written).map(preImageOf));
        for (const m of marks) {
          reserveMarker(ctx, m.target, m.sha, m.kind, m.before);
          reserved.push(m);
        }
      });
    } catch (err) {
      for (const m of reserved) unreserveMarker(ctx, m.target, m.sha);
      throw err;
    }
    for (const o of outcomes) if (o.written && o.after === null) ctx.ledger.drop(ctx.session, o.target.abs);
    const warnings = [synced, ...marks.map((m) => settleMarker(ctx, m.target, m.sha))].filter((w) => w !== undefined);
    return { outcomes, ...(warnings.length ? { warning: warnings.join(" ") } : {}) };
  }).finally(() => {
    for (const pin of pins.values()) pin.close();
  });
}

function preImageOf(o: ChangeOutcome) {
  return { target: o.target, before: o.before, afterSha: o.after === null ? null : sha256(o.after) };
}

/** The client's expected_sha256 of some targets (absolute path → sha256). */
export type Expected = Record<string, string>;

/**
 * Every expected_sha256 must hold; if none does and each file holds what this very call wrote from
 * it (a retry of a call that landed), the whole call is already applied (checkExpected, per file).
 */
function checkAllExpected(ctx: MutationContext, sorted: ResolvedPath[], currents: Currents, expected: Expected): void {
  const named = sorted.filter((t) => expected[t.abs] !== undefined);
  const shaOf = (t: ResolvedPath) => {
    const cur = currents.get(t.abs) ?? null;
    return cur === null ? null : sha256(cur);
  };
  const off = named.filter((t) => shaOf(t) !== expected[t.abs]);
  if (off.length === 0) return;
  const landed = (t: ResolvedPath) => {
    const cur = shaOf(t);
    return (
      cur !== null && ctx.call !== undefined && ctx.ledger.applied(ctx.session, t.abs, expected[t.abs], cur, ctx.call)
    );
  };
  if (off.length === named.length && named.every(landed))
    throw new AlreadyApplied(showName(named[0].rel), shaOf(named[0])!);
  // Not a retry: the first file that differs is refused by name (checkExpected says which hashes).
  const first = off.find((t) => !landed(t)) ?? off[0];
  checkExpected({ ...ctx, call: undefined }, first, shaOf(first), expected[first.abs]);
}

async function withLocks<T>(ctx: MutationContext, sorted: ResolvedPath[], fn: () => Promise<T>, i = 0): Promise<T> {
  if (i === sorted.length) return fn();
  return withPathLock(ctx.locksDir, sorted[i].abs, () => withLocks(ctx, sorted, fn, i + 1));
}

/** Stage every new content, run `beforeRenames` (which may throw: nothing changed), then rename and delete; returns any warning of the commits. */
async function writeAll(
  ctx: MutationContext,
  outcomes: ChangeOutcome[],
  pins: Pins,
  beforeRenames: () => Promise<void>,
): Promise<string | undefined> {
  const writes = outcomes.filter((o) => o.written && o.after !== null);
  const deletes = outcomes.filter((o) => o.written && o.after === null);
  // Folders made for new files: journaled first, removed again if the change does not land (fs/journal.ts).
  const made: { finish(failed: boolean): void }[] = [];
  let staged: Staged[] = [];
  // Every folder is the one its file was read through (the pins, held to the end), or for a folder
  // made here, opened by the walk (beneath.ts) before the first rename: the renames, removals and syncs
  // act through those descriptors, never by name again.
  const removing: { dir: Folder; name: string; o: ChangeOutcome; pin?: ReadPin }[] = [];
  const closeAll = () => {
    for (const s of staged) s?.close(); // a pin's folder stays open: the pin closes it
    for (const r of removing) if (!r.pin) r.dir.close();
  };
  let at = 0; // the write whose folder is being made
  try {
    for (; at < writes.length; at++) {
      made.push(makeParentsJournaled(ctx, writes[at].target));
    }
    staged = await stageAll(writes, pins);
    for (const o of deletes) {
      const pin = pins.get(o.target.abs);
      if (pin?.dir) removing.push({ dir: pin.dir, name: path.posix.basename(o.target.rel), o, pin });
      else removing.push({ ...openParent(o.target, { doing: "deleting" }), o });
    }
    await beforeRenames();
  } catch (err) {
    for (const s of staged) await s.discard();
    closeAll();
    for (const m of made.reverse()) m.finish(true);
    throw writeFailure(err, (writes[at] ?? outcomes[0]).target);
  }
  const done: Done[] = [];
  try {
    for (const [i, o] of writes.entries()) {
      await staged[i].rename();
      done.push({ o, dir: staged[i].dir, name: path.posix.basename(o.target.rel), made: staged[i].made });
    }
    for (const r of removing) {
      r.dir.check();
      if (r.pin?.file) removeRead(r.dir, r.name, r.pin, r.o.target, ctx.trash);
      else await unlink(r.dir.at(r.name));
      done.push({ o: r.o, dir: r.dir, name: r.name, made: null });
    }
  } catch (err) {
    // The staged files not renamed in go; the one whose rename failed was seen to by rename() itself.
    const landed = done.filter((d) => d.made !== null).length;
    for (const s of staged.slice(Math.min(landed + 1, staged.length))) await s.discard();
    const kept: string[] = [];
    const stuck = await undo(done, kept, ctx.trash);
    closeAll();
    for (const m of made.reverse()) m.finish(true);
    throw renameFailure(
      kept.length > 0 ? withKept(err, kept) : err,
      (writes[done.length] ?? deletes[done.length - writes.length] ?? outcomes[0]).target,
      stuck,
    );
  }
  for (const m of made) m.finish(false);
  // Each folder synced once, after all its renames and removals, not once per file. Told apart by
  // what is open, not by name: two files' pins on one path may hold two folders exchanged meanwhile.
  const warnings = new Set<string>();
  const synced = new Set<string>();
  for (const dir of [...staged.map((s) => s.dir), ...removing.map((r) => r.dir)]) {
    const { dev, ino } = fstatSync(dir.fd);
    if (synced.has(`${dev}:${ino}`)) continue;
    synced.add(`${dev}:${ino}`);
    const { warning } = syncRenamed(dir);
    if (warning) warnings.add(warning);
  }
  closeAll();
  return warnings.size ? [...warnings].join(" ") : undefined;
}

/** How many temp files are written and fsynced at once: the fsyncs overlap on the thread pool. */
const STAGE_CONCURRENCY = 8;

/** Stage every new content, a few at a time; on any failure the ones staged are removed and the first error thrown. */
async function stageAll(writes: ChangeOutcome[], pins: Pins): Promise<Staged[]> {
  const staged: Staged[] = [];
  let next = 0;
  let failure: { err: unknown; at: number } | undefined;
  const worker = async () => {
    for (let i = next++; i < writes.length && !failure; i = next++) {
      const o = writes[i];
      try {
        // A folder's dead temp files are swept by its first stage only (stageAtomic's sweepDue).
        staged[i] = await stageAtomic(o.target, (fh) => fh.writeFile(o.after!), pins.get(o.target.abs));
      } catch (err) {
        failure ??= { err, at: i };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAGE_CONCURRENCY, writes.length) }, worker));
  if (failure) {
    for (const s of staged) await s?.discard();
    throw writeFailure(failure.err, writes[failure.at].target);
  }
  return staged;
}

/**
 * Remove the file read, and only it (removeIfStill: not by name after a check), else refuse as stale
 * (nothing removed; a file found there stays, or is named where it was set aside).
 */
function removeRead(dir: Folder, name: string, pin: ReadPin, target: ResolvedPath, trash?: string): void {
  assertPinHolds(dir, name, pin, target); // written to since the read, or replaced: refused
  const file = pin.file!;
  const out = removeIfStill(dir, name, file, trash);
  if (out.done === "removed") return;
  if (out.done === "gone") throw changedSinceRead(target, "it was moved away");
  throw changedSinceRead(
    target,
    `another file took its place${out.aside ? `; ${keptAs(target, dir, out.aside)}` : ""}`,
  );
}

/** A file this change renamed in (`made`: the file, by device and inode) or removed (`made`: null), and where. */
interface Done {
  o: ChangeOutcome;
  dir: Folder;
  name: string;
  made: { dev: number; ino: number } | null;
}

/**
 * Put back the old content of the files already changed, newest first (each still atomic), in the
 * folders they were changed in, and only where the name still holds what this change left there: a
 * file another process put there since is its own, and stays. Returns the files it could not put back.
 */
async function undo(done: Done[], kept: string[], trash?: string): Promise<ResolvedPath[]> {
  const stuck: ResolvedPath[] = [];
  for (const { o, dir, name, made } of done.reverse()) {
    try {
      dir.check();
      if (o.before === null) {
        const out = removeIfStill(dir, name, made!, trash); // judges the name itself: another's file stays
        if (out.done === "other" && out.aside) kept.push(keptAs(o.target, dir, out.aside));
      } else {
        const pin = { dir, file: made, close: () => undefined }; // the rename checks the name still holds it
        const s = await stageAtomic(o.target, (fh) => fh.writeFile(o.before!), pin);
        await s.commit();
      }
    } catch {
      // Unless another process's file took the name meanwhile (then none of this change is there).
      if (made === null || stillHolds(dir, name, made)) stuck.push(o.target);
    }
  }
  return stuck;
}

/** holds(), where a folder gone or changed counts as holding: the file's state is then unknown. */
function stillHolds(dir: Folder, name: string, made: { dev: number; ino: number }): boolean {
  try {
    return holds(dir.at(name), made);
  } catch {
    return true;
  }
}

/** What a removal found at `target` instead of this change's file, and kept at the aside name. */
function keptAs(target: ResolvedPath, dir: Folder, aside: string): string {
  const at = showName(dir.rel === "." ? aside : `${dir.rel}/${aside}`);
  return `a file another process put at \`${showName(target.rel)}\` meanwhile was kept as \`${at}\``;
}

/** The error, saying what was kept aside while the change was undone. */
function withKept(err: unknown, kept: string[]): unknown {
  const also = ` (Undoing it, ${kept.join("; ")}.)`;
  if (err instanceof Refusal) return new Refusal(err.reason + also, err.hint, err.gate);
  if (err instanceof ToolError) return new ToolError(err.code, err.message + also);
  return err;
}

/** A rename or removal failed midway: what was undone, and what (if anything) still holds the new content. */
function renameFailure(err: unknown, at: ResolvedPath, stuck: ResolvedPath[]): unknown {
  // A refusal's own words say nothing was written: true only when every file went back.
  if ((err instanceof ToolError || err instanceof Refusal) && stuck.length === 0) return err;
  const code = errnoCode(err) ?? (err instanceof Refusal ? "it changed since it was read" : String(err));
  const left = stuck.length
    ? `; ${stuck.map((t) => `\`${showName(t.rel)}\``).join(", ")} could not be put back and hold${stuck.length === 1 ? "s" : ""} the new content`
    : "; every file changed before it was put back, so nothing was changed";
  return new ToolError(ioCode(errnoCode(err)), `\`${showName(at.rel)}\` could not be written (${code})${left}.`);
}
