// latch log verify FILE: check a policy log's chain, sequence numbers and hashes, and that every
// allowed effect has an outcome. Names the first bad line; exits 1 on any fault.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { verifyLog } from "../policy/log-verify.js";
import path from "node:path";
import { defaultStateDir } from "../workspace/state.js";
import { listRunLogs } from "./log-files.js";
import { printJson, UsageError } from "./options.js";

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
    .description("verify a policy log: chain, sequence, hashes, outcomes")
    .argument("<file>", "the policy log")
    .action((file: string) => {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        throw new UsageError(
          `Cannot read the policy log \`${file}\` (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
        );
      }
      const r = verifyLog(text);
      if (r.ok) {
        process.stdout.write(`${file}: ok: ${r.lines} lines, ${r.effects} effects; head sha256 ${r.head}\n`);
        return;
      }
      process.stdout.write(`${file}:${r.fault!.line}: ${r.fault!.message}\n`);
      process.exitCode = 1;
    });
}
