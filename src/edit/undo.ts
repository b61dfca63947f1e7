// What undoing write calls makes of the files now, worked out in memory before anything is written:
// the calls are replayed backwards, newest first, over the current contents. A file the call left
// as it is now goes back to what the call replaced; a file that already holds that is left (a write
// killed before its rename, or undone already); a file that holds anything else changed since the
// call, by anyone, and the whole undo is refused with the diff, since restoring would discard that
// change. The result is one change set (changeset.ts): under the locks, all or nothing.
import { Refusal } from "../errors.js";
import type { UndoCall } from "../fs/preimages.js";
import { sha256 } from "../fs/text.js";
import { showName } from "../fs/names.js";
import { buildDiff } from "./diff.js";

/** Lines of a conflict's diff quoted in the refusal; the rest is cut (the person can diff the file). */
const REFUSAL_DIFF_LINES = 60;

export interface UndoChange {
  rel: string;
  /** The current content (null: no file) and what the undo writes (null: the file is removed). */
  before: Buffer | null;
  after: Buffer | null;
}

export interface UndoReport {
  call_id: string;
  tool: string;
  files: { path: string; action: "restore" | "already" }[];
}

interface FileState {
  sha: string | null;
  /** The call (and its file) whose earlier content the file is to get back. */
  from?: { call: UndoCall; note: string | null };
}

/** `calls` newest first; `currents` by root-relative path; `blob` finds a kept content by its sha256. */
export function planUndo(
  calls: UndoCall[],
  currents: Map<string, Buffer | null>,
  blob: (sha: string) => Buffer | undefined,
  capBytes: number,
): { changes: UndoChange[]; report: UndoReport[] } {
  const known = new Map<string, Buffer>();
  const state = new Map<string, FileState>();
  for (const [rel, bytes] of currents) {
    const sha = bytes === null ? null : sha256(bytes);
    if (bytes !== null) known.set(sha!, bytes);
    state.set(rel, { sha });
  }
  const report: UndoReport[] = [];
  for (const call of calls) {
    const files: UndoReport["files"] = [];
    for (const f of call.files) {
      const st = state.get(f.rel) ?? { sha: null };
      if (st.sha === f.beforeSha) files.push({ path: showName(f.rel), action: "already" });
      else if (st.sha === f.afterSha) {
        state.set(f.rel, { sha: f.beforeSha, from: { call, note: f.note } });
        files.push({ path: showName(f.rel), action: "restore" });
      } else {
        const wanted = f.beforeSha === null ? null : (known.get(f.beforeSha) ?? blob(f.beforeSha) ?? undefined);
        throw changedSince(call, f.rel, currents.get(f.rel) ?? null, wanted);
      }
    }
    report.push({ call_id: call.callId, tool: call.tool, files });
  }
  const changes: UndoChange[] = [];
  for (const [rel, st] of state) {
    const now = currents.get(rel) ?? null;
    const nowSha = now === null ? null : sha256(now);
    if (st.sha === nowSha) continue;
    let after: Buffer | null = null;
    if (st.sha !== null) {
      const found = known.get(st.sha) ?? blob(st.sha);
      if (found === undefined) throw notKept(st.from!.call, rel, st.from!.note, capBytes);
      after = found;
    }
    changes.push({ rel, before: now, after });
  }
  return { changes, report };
}

function changedSince(call: UndoCall, rel: string, current: Buffer | null, wanted: Buffer | null | undefined): Refusal {
  const what =
    wanted === undefined
      ? "(its earlier content is no longer kept, so no diff can be shown)"
      : diffLines(rel, current, wanted);
  return new Refusal(
    `\`${showName(rel)}\` changed since call ${call.callId} (${call.tool}) wrote it, by another call or process; undoing it would discard that change, so nothing was undone. The diff from its current content to what it held before the call:\n${what}`,
    "Read the file and decide with the user; change it back with edit_file or write_file if the later change should go too.",
  );
}

function notKept(call: UndoCall, rel: string, note: string | null, capBytes: number): Refusal {
  const why =
    note === "streamed"
      ? "it was a streamed edit of a file over 8 MiB, of which only the hash is kept"
      : note === "too-large"
        ? `it was larger than the undo store's cap (_undo_max_bytes = ${capBytes})`
        : `it was evicted, oldest first, to keep this workspace's undo store under _undo_max_bytes (${capBytes} bytes)`;
  return new Refusal(
    `Undo is no longer possible for \`${showName(rel)}\`: what it held before call ${call.callId} (${call.tool}) is not kept (${why}); nothing was undone.`,
    "Restore it from version control or a backup; raise _undo_max_bytes in [tools_policies.local_fs] to keep more.",
  );
}

function diffLines(rel: string, current: Buffer | null, wanted: Buffer | null): string {
  const d = buildDiff(rel, current, wanted);
  if (d.diff === undefined) return `(${d.note ?? "no diff"})`;
  const lines = d.diff.split("\n");
  if (lines.length <= REFUSAL_DIFF_LINES) return d.diff;
  return `${lines.slice(0, REFUSAL_DIFF_LINES).join("\n")}\n\\ latch: diff cut here (${lines.length - REFUSAL_DIFF_LINES} more lines)\n`;
}
