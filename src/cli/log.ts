// latch log verify FILE: check a policy log's chain, sequence numbers and hashes, and that every
// allowed effect has an outcome. Names the first bad line; exits 1 on any fault.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { verifyLog } from "../policy/log-verify.js";
import { UsageError } from "./options.js";

export function registerLog(program: Command): void {
  const log = program.command("log").description("work with policy logs");
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
