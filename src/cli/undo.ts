// latch undo CALL_ID | --session S --since CALL_ID: the undo tool, through the host like any call
// (policy, approval with the exact diff, the log), run as the session that made the write unless
// --session says otherwise. latch history [--session S]: the write calls that can be undone.
import type { Command } from "commander";
import { PreImages, type UndoCall } from "../fs/preimages.js";
import { showName } from "../fs/names.js";
import { chooseApprover, EXIT, showDiff, type CallFlags } from "./call.js";
import { addHostFlags, hostFromFlags, printJson, UsageError, type HostFlags } from "./options.js";

type UndoFlags = CallFlags & { since?: string };

export function registerUndo(program: Command): void {
  addHostFlags(program.command("undo"))
    .description("undo a write call (or a session's writes since one), exactly, as a checked and logged write")
    .argument("[call_id]", "the write call to undo (its result's call_id; see `latch history`)")
    .option("--since <call_id>", "undo every write of the session from this call on, newest first")
    .option("--session <id>", "the session the undo runs as (default: the session that made the call)")
    .option("--yes", "approve the undo if it needs approval (logged as approved by --yes)")
    .option("--wait-approval", "without a terminal: wait for `latch approvals approve ID` from another terminal")
    .action(async (callId: string | undefined, flags: UndoFlags) => {
      if ((callId === undefined) === (flags.since === undefined))
        throw new UsageError("Give a call id, or --since CALL_ID (with --session S), not both.");
      const host = await hostFromFlags(flags);
      const store = new PreImages(host.state.db);
      try {
        const id = (callId ?? flags.since)!;
        const session = flags.session ?? store.call(host.root, id)?.session ?? process.env.LATCH_SESSION ?? "cli";
        const args = callId !== undefined ? { call_id: callId } : { since: flags.since };
        const out = await host.call("undo", args, { session, approver: chooseApprover(flags, host) });
        printJson(out);
        if (out.status === "ok" && process.stderr.isTTY) showDiff(out.display);
        process.exitCode = EXIT[out.status];
      } finally {
        store.close();
        host.close();
      }
    });

  addHostFlags(program.command("history"))
    .description("list the write calls latch can undo in this workspace, newest first")
    .option("--session <id>", "only this session's calls")
    .option("--limit <n>", "how many calls at most (default 50)")
    .option("--json", "print JSON")
    .action(async (flags: HostFlags & { session?: string; limit?: string; json?: boolean }) => {
      const limit = flags.limit === undefined ? 50 : Number(flags.limit);
      if (!Number.isSafeInteger(limit) || limit < 1)
        throw new UsageError(`Expected \`--limit\` to be a positive whole number, got \`${flags.limit}\`.`);
      const host = await hostFromFlags(flags);
      const store = new PreImages(host.state.db);
      try {
        const calls = store.list(host.root, flags.session, limit).map((c) => describe(store, host.root, c));
        if (flags.json) printJson(calls);
        else
          for (const c of calls) {
            const files = c.files.map((f) => `${f.change} ${f.path}`).join(", ");
            const can = c.undoable ? "" : `  (not undoable: ${c.why})`;
            process.stdout.write(`${c.call_id}  ${c.at}  ${c.session}  ${c.tool}  ${files}${can}\n`);
          }
      } finally {
        store.close();
        host.close();
      }
    });
}

/** One call as `latch history` shows it: what happened to each file, and whether every earlier content is still kept. */
function describe(store: PreImages, root: string, c: UndoCall) {
  const missing = c.files.filter((f) => f.beforeSha !== null && (f.note !== null || !store.hasBlob(root, f.beforeSha)));
  const files = c.files.map((f) => ({
    path: showName(f.rel),
    change: f.beforeSha === null ? "created" : f.afterSha === null ? "deleted" : "changed",
  }));
  return {
    call_id: c.callId,
    at: new Date(c.at).toISOString(),
    session: c.session,
    tool: c.tool,
    files,
    undoable: missing.length === 0,
    ...(missing.length
      ? { why: `the earlier content of ${missing.map((f) => showName(f.rel)).join(", ")} is no longer kept` }
      : {}),
  };
}
