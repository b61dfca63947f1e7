// A write call's undo record: the pipeline gives every files.write call an id and a journal (the
// write path keeps each replaced content under it, src/fs/preimages.ts); the result names the id,
// so the model can undo the call, and the log's outcome carries the hashes kept.
import type { PreImages, UndoFile } from "../fs/preimages.js";
import type { ToolSpec } from "../tools/define.js";
import type { CallResult } from "./types.js";
import type { HostContext } from "./context.js";
import { showName } from "../fs/names.js";
import { uniqueHex } from "../fs/unique.js";
import type { ShellWritesReport } from "../sandbox/tree-diff.js";

export interface CallJournal {
  callId: string;
  journal: ReturnType<PreImages["journal"]>;
  kept: UndoFile[];
}

/** A journal for a write of this disk (the client shape's editor keeps its own history); none for other calls. */
export function journalFor(ctx: HostContext, tool: ToolSpec, session: string): CallJournal | undefined {
  if (tool.axis !== "files.write" || ctx.files.kind !== "local" || !ctx.preimages) return undefined;
  // Unique across processes as the random part was: a random start per process, counted on (fs/unique.ts).
  const callId = `c${Date.now().toString(36)}${uniqueHex()}`;
  const kept: UndoFile[] = [];
  const info = { callId, root: ctx.root, session, tool: tool.name, cap: ctx.settings.local_fs.undoMaxBytes };
  return {
    callId,
    kept,
    journal: ctx.preimages.journal(info, (files) => {
      for (const f of files) kept.push(f);
    }),
  };
}

/** An ok result of a call that changed files names its call id (what `undo` takes). */
export function withCallId(r: CallResult, j: CallJournal | undefined): CallResult {
  if (!j || j.kept.length === 0 || r.status !== "ok") return r;
  return { ...r, result: { ...(r.result as Record<string, unknown>), call_id: j.callId } };
}

/** What the log's outcome records of the call's pre-images: the id and, per file, the hashes before and after. */
export function keptRecord(j: CallJournal | undefined): Record<string, unknown> | undefined {
  if (!j || j.kept.length === 0) return undefined;
  return {
    call_id: j.callId,
    files: j.kept.map((f) => ({
      path: showName(f.rel),
      before_sha256: f.beforeSha,
      after_sha256: f.afterSha,
      ...(f.note ? { not_kept: f.note } : {}),
    })),
  };
}

/** A contained run with a writable workspace: what it changed, which undo cannot restore (a field of an ok result, else a sentence). */
export function withShellWrites(r: CallResult, w: ShellWritesReport | undefined): CallResult {
  if (!w) return r;
  if (r.status === "ok") return { ...r, result: { ...(r.result as Record<string, unknown>), workspace_writes: w } };
  if (w.count === 0) return r;
  const said = ` The run changed ${w.count} file(s) (${w.changed.map((c) => `${c.path} ${c.change}`).join(", ")}); ${w.note}`;
  return r.status === "error" ? { ...r, message: r.message + said } : { ...r, reason: r.reason + said };
}
