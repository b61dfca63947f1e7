// latch approvals [list | show ID | approve ID | deny ID]: answer calls that wait in the approval queue
// (`latch call --wait-approval`, `latch mcp --approval-wait`): the state dir's, or with --state a
// fleet's PostgreSQL, where every instance's requests are listed with their host, workspace and session.
import { visibleArgs } from "../approval/visible.js";
import type { Command } from "commander";
import { sha256Hex, shownText } from "../approval/queue.js";
import { defaultStateDir, openStateDir } from "../fs/state.js";
import { openStore, stateUrlOf } from "../store/open.js";
import { printJson, UsageError } from "./options.js";

export function registerApprovals(program: Command): void {
  program
    .command("approvals")
    .description("list, show, approve or deny calls waiting for approval")
    .argument("[action]", "list (default), show, approve or deny", "list")
    .argument("[id]", "the request's ID (from list)")
    .option(
      "--state-dir <dir>",
      "the state dir of the waiting latch (default: LATCH_STATE_DIR, else the XDG state dir)",
    )
    .option(
      "--state <url>",
      "a fleet's PostgreSQL (postgres://…): every instance's waiting calls (default: LATCH_STATE_URL, else the state dir's queue)",
    )
    .option("--json", "print JSON")
    .option(
      "--for-session",
      "with approve: also allow later calls of the same session within the request's scope (the same program and subcommand, or the same file)",
    )
    .action(
      async (
        action: string,
        id: string | undefined,
        flags: { stateDir?: string; state?: string; json?: boolean; forSession?: boolean },
      ) => {
        if (!["list", "show", "approve", "deny"].includes(action))
          throw new UsageError(`Expected \`action\` to be list, show, approve or deny, got \`${action}\`.`);
        if (action !== "list" && !id)
          throw new UsageError(`\`latch approvals ${action}\` needs the request's ID; see \`latch approvals list\`.`);
        const state = openStateDir(flags.stateDir ?? defaultStateDir());
        const store = await openStore(stateUrlOf(flags.state), state);
        const queue = store.approvals;
        try {
          if (action === "list") {
            const items = (await queue.list()).filter((q) => q.state === "pending");
            if (flags.json) return printJson(items.map(({ diff, ...rest }) => ({ ...rest, has_diff: diff !== null })));
            if (items.length === 0) return void process.stdout.write("no calls are waiting for approval\n");
            for (const q of items)
              process.stdout.write(
                `${q.id}  ${q.tool}  ${q.reason}${q.risk.length ? `  [${q.risk.join(", ")}]` : ""}  (${q.host ? `${q.host}:${q.workspace} ` : ""}session ${q.session}, until ${q.expires_at})\n`,
              );
            return;
          }
          const item = await queue.get(id!);
          if (!item || item.state !== "pending") {
            process.stdout.write(`no waiting request \`${id}\`; it was answered, timed out, or its call ended\n`);
            process.exitCode = 1;
            return;
          }
          if (action === "show") {
            if (flags.json) return printJson(item);
            const lines = [
              `${item.id}: ${item.tool} (${item.host ? `host ${item.host}, workspace ${item.workspace}, ` : ""}session ${item.session})`,
              `why: ${item.reason}`,
              `risk: ${item.risk.length ? item.risk.join(", ") : "none named"}`,
              item.scope
                ? `--for-session would also allow: ${item.scope}`
                : "only a one-time approval is offered for this request",
              `arguments: ${visibleArgs(item.args)}`,
            ];
            for (const [rel, sha] of Object.entries(item.content_sha256 ?? {}))
              lines.push(`diffed against: ${rel} ${sha === null ? "(a new file)" : `sha256:${sha}`}`);
            if (item.diff) lines.push("", item.diff.trimEnd());
            if (item.diff_note) lines.push(`(${item.diff_note})`);
            return void process.stdout.write(lines.join("\n") + "\n");
          }
          if (flags.forSession && action === "approve" && !item.scope)
            throw new UsageError(`\`${id}\` can be approved once only (${item.risk.join(", ")}); drop --for-session.`);
          const scope = flags.forSession ? "session" : "once";
          // Bound to what `show` prints: an answer lands only on the request as it was read here.
          const ok = await queue.answer(id!, {
            approved: action === "approve",
            scope,
            shownSha256: sha256Hex(shownText(item)),
          });
          const what =
            action === "approve"
              ? `approved ${id}${scope === "session" ? ` for this session: ${item.scope}` : ""}`
              : `denied ${id}`;
          process.stdout.write(ok ? `${what}\n` : `no waiting request \`${id}\`\n`);
          if (!ok) process.exitCode = 1;
        } finally {
          await store.close();
        }
      },
    );
}
