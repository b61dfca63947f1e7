import { z } from "zod";
import { Refusal, ToolError } from "../errors.js";
import { commitChanges, readCurrents, type Currents } from "../edit/changeset.js";
import { planUndo, type UndoReport } from "../edit/undo.js";
import type { UndoCall } from "../fs/preimages.js";
import { gitDirMadeBy, protectedRefusal } from "../fs/protected.js";
import type { ResolvedPath } from "../fs/paths.js";
import { showName } from "../fs/names.js";
import { defineTool, type Plan, type PreviewFile, type ToolEnv } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { sha256 } from "../fs/text.js";
import { filesDisplay } from "./write-display.js";

const schema = () =>
  z.strictObject({
    call_id: z
      .string()
      .min(1)
      .optional()
      .describe("Undo this one write call: the `call_id` its result carried (or `latch history` lists)."),
    since: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Undo every write of this session from this call id on, newest first. Give call_id or since, not both.",
      ),
    dry_run: dryRunField(),
  });
type Args = z.infer<ReturnType<typeof schema>>;

interface UndoPlan extends Plan {
  paths: ResolvedPath[];
  /** Newest first. */
  calls: UndoCall[];
}

export default defineTool({
  name: "undo",
  aliases: ["revert_call"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Undo what latch's file tools wrote: one write call (call_id, from that call's result), or every write of this session from a call on (since), newest first.",
    "Each file gets back the exact bytes the call replaced: an edit is reverted, a created file removed, a deleted file recreated, a moved file moved back.",
    "If a file changed since the call (by you or anyone), nothing is undone and the diff is shown. The undo is itself a write (it needs your read of the current content) and can be undone in turn.",
    "Changes made through the shell are not covered.",
  ].join(" "),
  schema,
  async plan(args, env): Promise<UndoPlan> {
    const calls = findCalls(args, env);
    const paths: ResolvedPath[] = [];
    const seen = new Set<string>();
    for (const call of calls)
      for (const f of call.files) {
        if (seen.has(f.rel)) continue;
        seen.add(f.rel);
        const p = await env.resolve(f.rel, { forWrite: true });
        // A link on the way now (review g60): the undo would write another file than the call wrote.
        if (p.rel !== f.rel)
          throw new Refusal(
            `\`${showName(f.rel)}\` now leads to \`${showName(p.rel)}\` (a link on its way), which is not the file ` +
              `the call wrote; nothing was undone.`,
            "Put the folder back where the call wrote, or restore the file by hand.",
          );
        paths.push(p);
      }
    // Each file alone may be fine and the whole not: HEAD and refs/ put back together (review g2).
    const made = gitDirMadeBy(
      env.root,
      paths.map((p) => p.rel),
    );
    if (made !== undefined) throw protectedRefusal(made);
    return { paths, calls };
  },
  async run(args, plan, env) {
    let report: UndoReport[] = [];
    let shown: PreviewFile[] = [];
    const out = await commitChanges(env.mutation, plan.paths, plan.bases, (currents) => {
      const u = undoOf(plan, currents, env);
      report = u.report;
      shown = u.files;
      // Each current content was matched to what a recorded call wrote (planUndo): that stands in for a read.
      return u.files.map((f) => ({
        target: f.source,
        after: f.after,
        needs: "range" as const,
        ...(f.before ? { checkedAgainst: sha256(f.before) } : {}),
      }));
    });
    return {
      result: {
        undone: report,
        changed: out.outcomes.filter((o) => o.written).length,
        ...(out.warning ? { warning: out.warning } : {}),
      },
      display: filesDisplay(shown),
    };
  },
  async preview(args, plan, env) {
    const files = undoOf(plan, await readCurrents(plan.paths), env).files;
    return { before: null, after: Buffer.alloc(0), files };
  },
});

/** The calls to undo, newest first; an id this workspace's store does not know is an error naming where ids come from. */
function findCalls(args: Args, env: ToolEnv): UndoCall[] {
  if ((args.call_id === undefined) === (args.since === undefined))
    throw new ToolError(
      "EINVAL",
      "Pass either `call_id` (one call) or `since` (this session's writes from that call on).",
    );
  const store = env.preimages;
  if (!store)
    throw new Refusal(
      "Undo is not available here: this host keeps no pre-images.",
      "Ask the user to restore the file.",
    );
  const id = (args.call_id ?? args.since)!;
  const calls = args.call_id ? [store.call(env.root, id)] : store.since(env.root, env.session, id);
  if (!calls || calls[0] === undefined)
    throw new ToolError(
      "ENOENT",
      `No write call \`${id}\` is in this workspace's undo history${args.since ? " for this session" : ""}. Ids come from a write's \`call_id\` (or \`latch history\`); reads and calls that changed nothing have none.`,
    );
  return calls as UndoCall[];
}

/** The files the undo changes, from the current contents (read under the locks in run). */
function undoOf(plan: UndoPlan, currents: Currents, env: ToolEnv): { files: PreviewFile[]; report: UndoReport[] } {
  const byRel = new Map(plan.paths.map((p) => [p.rel, p]));
  const now = new Map(plan.paths.map((p) => [p.rel, currents.get(p.abs) ?? null]));
  const store = env.preimages!;
  const u = planUndo(plan.calls, now, (sha) => store.blob(env.root, sha), env.settings.local_fs.undoMaxBytes);
  const files = u.changes.map((c) => ({
    rel: c.rel,
    before: c.before,
    after: c.after,
    source: byRel.get(c.rel)!,
  }));
  return { files, report: u.report };
}
