// The one way any tool changes a file: lock → read the current bytes → base and read-before-write
// checks → compute → atomic write → move the session's read marker. The checks run under the lock,
// right before the write, so a change by anyone since the session's read refuses the write. A write
// carries its base (the content it was computed from, taken when the call started, before any wait):
// of two calls based on one read, the second finds the first's content and is refused as stale, even
// in the same session, whose marker the first moved on.
import path from "node:path";
import { AlreadyApplied, Refusal, ToolError, errnoCode, ioCode } from "../errors.js";
import type { Written } from "../fs/atomic-write.js";
import { LOCAL_FILES, type FileBackend } from "../fs/backend.js";
import type { Ledger, ReadKind } from "../fs/ledger.js";
import type { Journal, PreImage } from "../fs/preimages.js";
import { withPathLock } from "../fs/lock.js";
import type { ResolvedPath } from "../fs/paths.js";
import { lstatBeneath, openParent, rootOf, type Doing } from "../fs/beneath.js";
import { removeEmptyFolders } from "../fs/journal.js";
import { stateFault } from "../fs/state.js";
import { sha256 } from "../fs/text.js";
import { showName } from "../fs/names.js";

/** Once a write starts under the lock it runs to its end: the call's signal stops it before, not during. */
const NO_SIGNAL = new AbortController().signal;

export interface MutationContext {
  root: string;
  locksDir: string;
  ledger: Ledger;
  session: string;
  /** Where the file is read and written; default this disk (LOCAL_FILES). */
  files?: FileBackend;
  /** The call's signal: a long (streamed) write stops on it, before its rename. */
  signal?: AbortSignal;
  /**
   * A folder of latch's state on the workspace's file system, hidden from every sandbox, where a removal
   * judges the file it takes (removeIfStill); none, or on another file system: judged in its folder.
   */
  trash?: string;
  /** Where the call's replaced contents go, for undo (src/fs/preimages.ts); none: not kept. */
  journal?: Journal;
  /** The call's key (its tool and arguments hashed): a write remembers it, so that a retry of the same call is told it already landed. */
  call?: string;
  /**
   * The call's decision is being synced meanwhile (RunLog.decisionSyncing): nothing lands before it
   * is durable. mutate() and streamed edits wait for it right before the rename (after the temp file's
   * and the pre-images' syncs, which it overlaps), and before making any folder; a rejection abandons
   * the write with nothing changed. Only tools that say so get one (ToolSpec.awaitsDecisionSync).
   */
  decisionSynced?: Promise<void>;
}

export interface Mutation {
  target: ResolvedPath;
  /** What earlier read an existing file needs: write_file a full one, edits any. */
  needs: ReadKind;
  /** Only write_file creates missing parent folders; an edit of a missing file is an error. */
  createParents?: boolean;
  /**
   * The sha256 this write is based on: it lands only if the file holds exactly this content under the
   * lock (null: only if the file does not exist). Write tools pass their call's base (baseOf); an
   * approved write may pass the sha256 of the bytes the person saw. Undefined: read-before-write only.
   */
  expectSha?: string | null;
  /** The client's expected_sha256: the bytes the call was made for (checkExpected). */
  expected?: string;
  /** Compute the new bytes from the current ones (null: the file does not exist). May throw. */
  apply(current: Buffer | null): Uint8Array | string;
  /**
   * The caller's own work for after the write (the diff it shows), done while the write's syncs run
   * instead of after them: called once the new bytes are staged and the pre-images kept, before the
   * rename, only for a write that changes the file. A throw is dropped here: the caller does the work
   * again after the write, where a fault is reported as its own. Synchronous (it returns undefined,
   * so an async function, whose rejection nothing would await, does not type-check).
   */
  meanwhile?(before: Buffer | null, after: Buffer): undefined;
}

export interface MutationOutcome {
  before: Buffer | null;
  after: Buffer;
  written: boolean;
  /** sha256 of before (null when the file did not exist) and of after, hashed once here for the check, the ledger and the result. */
  beforeSha: string | null;
  afterSha: string;
  /** The file was written, but something after the rename could not be made sure of (ledger, folder sync). */
  warning?: string;
}

export async function mutate(ctx: MutationContext, m: Mutation): Promise<MutationOutcome> {
  const { target } = m;
  return underMutationLock(ctx, target, m.createParents === true, async (unlock) => {
    const files = ctx.files ?? LOCAL_FILES;
    // On this disk the write is tied to this read: it stages in the folder the read went through and
    // replaces only the file read there, or is refused as stale (ReadPin in src/fs/atomic-write.ts).
    const { bytes: before, pin } = files.readPinned
      ? await files.readPinned(target, NO_SIGNAL)
      : { bytes: await files.read(target, NO_SIGNAL), pin: undefined };
    try {
      const beforeSha = before === null ? null : sha256(before);
      checkExpected(ctx, target, beforeSha, m.expected);
      checkBase(ctx, target, beforeSha, m.expectSha);
      const kind: ReadKind = beforeSha === null ? "full" : checkReadBeforeWrite(ctx, target, beforeSha, m.needs);
      const next = m.apply(before);
      const after = Buffer.isBuffer(next) ? next : Buffer.from(next);
      if (before !== null && before.equals(after))
        return { before, after, written: false, beforeSha, afterSha: beforeSha! };
      const afterSha = sha256(after);
      // The temp file is staged first (its fsync dispatched to the thread pool), then the pre-images
      // are kept: their transaction runs on this thread while that fsync runs, and their own sync beside
      // it. Once the temp file is synced, the session's new marker is reserved, then the pre-images'
      // and the decision's syncs are awaited before the rename. A write that fails before then
      // reports its own error. Once renamed and settled, the lock goes while the folder is synced.
      let keep!: () => void;
      const kept = new Promise<void>((resolve, reject) => {
        keep = () => void keepPreImages(ctx, [{ target, before, beforeSha, afterSha }]).then(resolve, reject);
      });
      kept.catch(() => undefined);
      const writing = writeWithMarker(
        ctx,
        target,
        kind,
        (reserve, settle) =>
          files.write(
            target,
            after,
            NO_SIGNAL,
            async () => {
              // The marker first, while the pre-images' and the decision's syncs may still run: its
              // transaction overlaps them instead of following them. A write abandoned after it
              // takes it back (writeWithMarker).
              reserve(afterSha);
              await kept;
              await ctx.decisionSynced;
            },
            () => {
              settle();
              try {
                unlock();
              } catch {
                // as when the lock is released after the write (underMutationLock): the write stands
              }
            },
            pin,
          ),
        beforeSha,
      );
      keep();
      // The decision's, the temp file's and the pre-images' syncs are all on the thread pool now.
      try {
        m.meanwhile?.(before, after);
      } catch {
        // done again after the write (see Mutation.meanwhile)
      }
      const warning = await writing;
      return { before, after, written: true, beforeSha, afterSha, ...(warning ? { warning } : {}) };
    } finally {
      pin?.close();
    }
  });
}

/**
 * The write and the session's marker as one step. `write` calls `reserve(afterSha)` before its
 * rename (mutate: once the temp file is synced): the new content's marker is added then, and a ledger
 * that cannot take it (busy, full, broken) abandons the write with nothing changed; a write abandoned
 * after it (a sync that failed, a file changed since the read) takes the marker back. After the
 * rename nothing fails the call: the marker is settled, and if that fails the result is still
 * "written", with a warning, and the session's markers for the file are dropped here, so its next
 * write needs a fresh read. `write` may call `settle()` right after its rename, while the folder's
 * fsync runs; if it does not, the marker is settled once it returns.
 */
export async function writeWithMarker(
  ctx: MutationContext,
  target: ResolvedPath,
  kind: ReadKind,
  write: (reserve: (afterSha: string) => void, settle: () => void) => Promise<Written>,
  before: string | null = null,
): Promise<string | undefined> {
  let reserved: string | undefined;
  let written: Written;
  let settled: { warning?: string } | undefined;
  const settle = () => {
    if (reserved !== undefined && settled === undefined) settled = { warning: settleMarker(ctx, target, reserved) };
  };
  try {
    written = await write((afterSha) => {
      reserveMarker(ctx, target, afterSha, kind, before);
      reserved = afterSha;
    }, settle);
  } catch (err) {
    if (reserved !== undefined && settled === undefined) unreserveMarker(ctx, target, reserved);
    throw writeFailure(err, target);
  }
  settle();
  const warnings = [written.warning, settled?.warning].filter((w) => w !== undefined);
  return warnings.length ? warnings.join(" ") : undefined;
}

// The three steps of writeWithMarker, for the writes that rename several files (changeset.ts) or move
// one (fileops.ts): reserve every marker before the first rename, settle them after the last.

/** Before the rename: the new content's marker, beside the current one; throws (nothing written) if the ledger cannot take it. */
export function reserveMarker(
  ctx: MutationContext,
  target: ResolvedPath,
  sha: string,
  kind: ReadKind,
  before: string | null = null,
): void {
  try {
    ctx.ledger.reserve(ctx.session, target.abs, sha, kind, { before, call: ctx.call });
  } catch (err) {
    throw notRecorded(err, target);
  }
}

/**
 * Before the rename, beside the markers: what each file held, into the undo store, so every write
 * that lands can be undone. The one step every write passes (mutate, streamed edits, changesets,
 * moves); a store that cannot take them abandons the write with nothing changed.
 */
export async function keepPreImages(
  ctx: MutationContext,
  files: (PreImage & { target: ResolvedPath })[],
): Promise<void> {
  if (!ctx.journal || files.length === 0) return;
  try {
    await ctx.journal.keep(files);
  } catch (err) {
    const why = err instanceof ToolError ? err.message : String((err as Error)?.message ?? err);
    throw new ToolError(
      "ESTATE",
      `latch could not keep what this write replaces, for undo (${why}). Nothing was written: \`${showName(files[0].target.rel)}\` still holds its old content.`,
    );
  }
}

/** The rename did not happen: the reserved marker goes again. */
export function unreserveMarker(ctx: MutationContext, target: ResolvedPath, sha: string): void {
  try {
    ctx.ledger.unreserve(ctx.session, target.abs, sha);
  } catch {
    // A leftover marker of content that never landed only makes the next write refused as stale.
  }
}

/** After the rename nothing fails the call: the marker settles, or the file's markers are dropped and a warning says so. */
export function settleMarker(ctx: MutationContext, target: ResolvedPath, sha: string): string | undefined {
  try {
    ctx.ledger.settle(ctx.session, target.abs, sha);
    return undefined;
  } catch (err) {
    ctx.ledger.drop(ctx.session, target.abs);
    return `The file was written, but the read ledger could not be updated (${(err as Error).message}). Read \`${showName(target.rel)}\` again before writing to it.`;
  }
}

/** The ledger refused the new marker before the rename: say so, and that nothing was written. */
function notRecorded(err: unknown, target: ResolvedPath): ToolError {
  const e = err instanceof ToolError ? err : new ToolError("ESTATE", String((err as Error)?.message ?? err));
  return new ToolError(
    e.code,
    `${e.message} Nothing was written: \`${showName(target.rel)}\` still holds its old content.`,
  );
}

/**
 * Run `fn` under the target's cross-process lock, after re-checking that its folder is still the one
 * the path resolved to. Every mutation, in memory or streamed (mutate-stream.ts), goes through here.
 */
export async function underMutationLock<T>(
  ctx: MutationContext,
  target: ResolvedPath,
  createParents: boolean,
  fn: (unlock: () => void) => Promise<T>,
): Promise<T> {
  // A client-held file is the editor's to create, folders included; the lock still orders latch's calls.
  if (ctx.files?.kind === "client") return withPathLock(ctx.locksDir, target.abs, fn);
  // A folder made is a change too: not before the decision is durable.
  if (createParents) await ctx.decisionSynced;
  const parents = createParents ? makeParentsJournaled(ctx, target) : undefined;
  // Faults of the lock itself (a full, missing or read-only state dir) are named; once `fn` has run,
  // its result stands even if releasing the lock fails: the disk has changed as it says.
  const at: { phase: "lock" | "run" | "done" } = { phase: "lock" };
  let result: T | undefined;
  try {
    return await withPathLock(ctx.locksDir, target.abs, async (unlock) => {
      at.phase = "run";
      await assertFolderUnchanged(ctx, target);
      result = await fn(unlock);
      at.phase = "done";
      return result;
    });
  } catch (err) {
    if (at.phase === "done") return result as T;
    if (at.phase === "lock") {
      const fault = stateFault(err, ctx.locksDir, path.dirname(ctx.locksDir), "take the write lock");
      if (fault instanceof ToolError) throw new ToolError(fault.code, `${fault.message} Nothing was written.`);
    }
    throw err;
  } finally {
    // The folders made for a write that did not land go again (a file that already existed made none).
    parents?.finish(at.phase !== "done");
  }
}

/**
 * Under the lock: walk to the target's folder (beneath.ts), so a folder swapped for a link since the
 * path was resolved is refused by name before anything is read or staged. The write itself walks again
 * and acts through the folder's descriptor: this check is for the message, the walk for the guarantee.
 * A missing folder passes: the read finds no file, and the operation says what that means.
 */
export async function assertFolderUnchanged(
  _ctx: MutationContext,
  target: ResolvedPath,
  doing: Doing = "writing",
): Promise<void> {
  if (target.rel === ".") return;
  try {
    openParent(target, { doing }).dir.close();
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw err;
  }
}

/**
 * makeParents, journaled when a folder is missing: a write killed before it lands leaves no empty
 * folder (recovery removes it, fs/journal.ts), and `finish(true)` removes what was made when the write
 * failed. Call `finish` once the write landed (false) or failed (true).
 */
export function makeParentsJournaled(
  ctx: MutationContext,
  target: ResolvedPath,
  doing: Doing = "writing",
): { made: readonly string[]; finish(failed: boolean): void } {
  const parent = path.posix.dirname(target.rel);
  const at = (rel: string) => ({ abs: path.join(rootOf(target), rel), rel });
  let keep = parent;
  while (keep !== "." && lstatBeneath(at(keep), doing) === undefined) keep = path.posix.dirname(keep);
  if (keep === parent) return { made: makeParents(target, doing), finish: () => undefined };
  const step = ctx.ledger.beginFolders(target, keep);
  let made: readonly string[];
  try {
    made = makeParents(target, doing);
  } catch (err) {
    removeEmptyFolders(target, keep);
    if (step !== undefined) ctx.ledger.journal.done(step);
    if (err instanceof ToolError || err instanceof Refusal || errnoCode(err) === undefined) throw err;
    throw new ToolError(
      ioCode(errnoCode(err)),
      `A folder for \`${showName(target.rel)}\` could not be made (${errnoCode(err)}); nothing was changed.`,
    );
  }
  return {
    made,
    finish(failed) {
      if (failed) removeEmptyFolders(target, keep);
      if (step !== undefined) ctx.ledger.journal.done(step);
    },
  };
}

/** Make the target's missing folders, each through its parent's descriptor: none is ever made outside the root. */
function makeParents(target: ResolvedPath, doing: Doing = "writing"): readonly string[] {
  if (target.rel === ".") return [];
  const { dir } = openParent(target, { create: true, doing });
  dir.close();
  return dir.made;
}

/** What a write starting now is based on: the content the session last read or wrote, or null for none. */
export function baseOf(ctx: MutationContext, target: ResolvedPath): string | null {
  return ctx.ledger.latest(ctx.session, target.abs) ?? null;
}

/** The file must still hold the content the write was based on (`expected`; null: no file). */
export function checkBase(
  ctx: MutationContext,
  target: ResolvedPath,
  current: string | null,
  expected: string | null | undefined,
): void {
  if (expected === undefined || current === expected) return;
  if (current === null) {
    throw new Refusal(
      `\`${showName(target.rel)}\` was deleted since you read it; nothing was written.`,
      "Check with list_dir whether it should exist, then retry.",
    );
  }
  if (expected === null && !ctx.ledger.readAnyVersion(ctx.session, target.abs)) {
    throw new Refusal(
      `\`${showName(target.rel)}\` exists and you have not read it in this session; nothing was written.`,
      "Read the file first (read_file), then retry.",
    );
  }
  throw new Refusal(
    `\`${showName(target.rel)}\` changed since you read it (by another call or process while this one waited); nothing was written.`,
    "Read it again, then retry.",
  );
}

/**
 * The client's expected_sha256 (a client that retries sends it): the file must hold exactly those
 * bytes. If it does not, and the session's last write of the file was this very call (same tool and
 * arguments) from those bytes to what the file holds now, the call already landed: AlreadyApplied,
 * nothing is written. Otherwise a refusal naming both hashes.
 */
export function checkExpected(
  ctx: MutationContext,
  target: ResolvedPath,
  current: string | null,
  expected: string | undefined,
): void {
  if (expected === undefined || current === expected) return;
  if (
    current !== null &&
    ctx.call !== undefined &&
    ctx.ledger.applied(ctx.session, target.abs, expected, current, ctx.call)
  )
    throw new AlreadyApplied(showName(target.rel), current);
  throw new Refusal(
    `\`${showName(target.rel)}\` does not hold the bytes this call expected: its sha256 is ${current ?? "none (it does not exist)"}, expected_sha256 is ${expected}; nothing was written.`,
    "Read it again (read_file gives its sha256), then retry with that expected_sha256, or without one.",
  );
}

/** Read-before-write: what the session has seen of the current content (`sha`), or a refusal. */
export function checkReadBeforeWrite(
  ctx: MutationContext,
  target: ResolvedPath,
  sha: string,
  needs: ReadKind,
): ReadKind {
  const seen = ctx.ledger.seen(ctx.session, target.abs, sha);
  if (seen === undefined) {
    if (ctx.ledger.readAnyVersion(ctx.session, target.abs)) {
      throw new Refusal(
        `\`${showName(target.rel)}\` changed since you read it; nothing was written.`,
        "Read it again, then retry.",
      );
    }
    throw new Refusal(
      `\`${showName(target.rel)}\` exists and you have not read it in this session; nothing was written.`,
      "Read the file first (read_file), then retry.",
    );
  }
  if (needs === "full" && seen !== "full") {
    throw new Refusal(
      `Overwriting \`${showName(target.rel)}\` needs a full read of its current content; you read only part of it, and unseen lines would be lost.`,
      "Read the whole file with read_file, then retry, or change it with edit_file.",
    );
  }
  return seen;
}

export function writeFailure(err: unknown, target: ResolvedPath): unknown {
  if (err instanceof ToolError || err instanceof Refusal) return err;
  const code = errnoCode(err);
  const keep = `nothing was changed: \`${showName(target.rel)}\` still holds its old content`;
  if (code === "ENOSPC" || code === "EDQUOT")
    return new ToolError(code, `The disk is full; ${keep}. Free some space, then retry.`);
  if (code === "EROFS") return new ToolError(code, `The file system is read-only; ${keep}.`);
  if (code === "EACCES" || code === "EPERM")
    return new ToolError(code, `Permission denied writing \`${showName(target.rel)}\`; ${keep}.`);
  // Any other fault of the disk (EIO, …): named, with what the disk holds; never a bare errno.
  if (code !== undefined)
    return new ToolError(ioCode(code), `Writing \`${showName(target.rel)}\` failed (${code}); ${keep}.`);
  return err;
}
