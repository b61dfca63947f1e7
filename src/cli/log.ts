// latch log verify FILE: check a policy log's chain, sequence numbers and hashes, that every allowed
// effect has an outcome, and that it ends in the head latch kept in the state database (a log
// re-chained from line 1, or cut, no longer verifies). Names the first bad line; exits 1 on any fault.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import type { Command } from "commander";
import { LogHeads, type LogHead } from "../audit/log-heads.js";
import { verifyLog } from "../audit/log-verify.js";
import path from "node:path";
import { defaultStateDir } from "../fs/state.js";
import { listRunLogs } from "./log-files.js";
import { printJson, UsageError } from "./options.js";

/** The head latch kept for this log in the state database, or why there is none to compare with. */
function keptHead(file: string, stateDir: string): { head?: LogHead; note: string } {
  const db = path.join(stateDir, "latch.db");
  if (!existsSync(db)) return { note: `no state database at ${db} to compare the head with` };
  const heads = new LogHeads(db, { readonly: true });
  try {
    const names = [path.resolve(file), ...(existsSync(file) ? [realpathSync(file)] : [])];
    for (const n of names) {
      const head = heads.get(n);
      if (head) return { head, note: "" };
    }
    return { note: `no head kept for it in ${db} (another state dir, or a log from before heads were kept)` };
  } finally {
    heads.close();
  }
}

export function registerLog(program: Command): void {
  const log = program.command("log").description("work with policy logs");
  log
    .command("list")
    .description("list the run logs in a --policy-log folder (default: the state dir's logs/), oldest first")
    .argument("[dir]", "the folder")
    .option("--state-dir <dir>", "the state dir whose logs/ to list (default: LATCH_STATE_DIR, else the XDG state dir)")
    .option("--json", "print JSON")
    .action((dir: string | undefined, flags: { stateDir?: string; json?: boolean }) => {
      const folder = dir ?? path.join(flags.stateDir ?? defaultStateDir(), "logs");
      const logs = listRunLogs(folder);
      if (flags.json) return printJson(logs);
      if (logs.length === 0) return void process.stdout.write(`no run logs in ${folder}\n`);
      for (const l of logs)
        process.stdout.write(
          `${l.file}  ${l.bytes} B  started ${l.started_at ?? "?"}  ${l.effects} decisions  ${l.finished ? "finished" : "open or cut short"}\n`,
        );
    });
  log
    .command("verify")
    .description("verify a policy log: chain, sequence, hashes, outcomes, and the head kept in the state dir")
    .argument("<file>", "the policy log")
    .option(
      "--state-dir <dir>",
      "the state dir that kept the log's head (default: LATCH_STATE_DIR, else the XDG state dir)",
    )
    .action((file: string, flags: { stateDir?: string }) => {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        throw new UsageError(
          `Cannot read the policy log \`${file}\` (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
        );
      }
      const r = verifyLog(text);
      const kept = keptHead(file, flags.stateDir ?? defaultStateDir());
      if (r.ok && kept.head && (kept.head.head !== r.head || kept.head.lines !== r.lines)) {
        // The chain holds, but it is not the one latch wrote: re-chained from some line, or cut.
        process.stdout.write(
          `${file}: the chain is whole, but latch kept another head for this log (${kept.head.lines} lines, sha256 ${kept.head.head}, at ${kept.head.updated_at}); this file has ${r.lines} lines ending in ${r.head}: it was rewritten or cut\n`,
        );
        process.exitCode = 1;
        return;
      }
      if (r.ok) {
        process.stdout.write(
          `${file}: ok: ${r.lines} lines, ${r.effects} effects; head sha256 ${r.head}; ${kept.head ? "matches the head kept in the state dir" : kept.note}\n`,
        );
        return;
      }
      process.stdout.write(`${file}:${r.fault!.line}: ${r.fault!.message}\n`);
      process.exitCode = 1;
    });
}
